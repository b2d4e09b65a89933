package icmpv6_test

import (
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	xicmp "golang.org/x/net/icmp"
	xipv6 "golang.org/x/net/ipv6"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

var _ = Describe("Checksum (RFC 4443 section 2.3)", func() {
	It("agrees with golang.org/x/net/icmp over the RFC 8200 section 8.1 pseudo-header", func() {
		for _, n := range []int{0, 1, 7, 56, 1231} {
			m := xicmp.Message{Type: xipv6.ICMPTypeEchoRequest, Body: &xicmp.Echo{ID: 77, Seq: 5, Data: pattern(n)}}
			want, err := m.Marshal(xicmp.IPv6PseudoHeader(net.IP(peer[:]), net.IP(me[:])))
			Expect(err).NotTo(HaveOccurred())
			r := icmpv6.Repr{Type: icmpv6.TypeEchoRequest, Ident: 77, Seq: 5, Data: pattern(n)}
			got := make([]byte, r.BufferLen())
			r.Emit(got, peer, me)
			Expect(got).To(Equal(want), "data length %d", n)
			Expect(icmpv6.VerifyChecksum(peer, me, got)).To(BeTrue())
			Expect(icmpv6.Checksum(peer, me, got)).To(BeZero())
			zeroed := append([]byte(nil), got...)
			icmpv6.Header(zeroed).SetChecksum(0)
			Expect(icmpv6.Checksum(peer, me, zeroed)).To(Equal(icmpv6.Header(got).Checksum()))
		}
	})
	It("covers the addresses: the same message to another destination fails", func() {
		r := icmpv6.Repr{Type: icmpv6.TypeEchoReply, Data: pattern(8)}
		b := make([]byte, r.BufferLen())
		r.Emit(b, peer, me)
		Expect(icmpv6.VerifyChecksum(peer, group, b)).To(BeFalse())
	})
})

var _ = Describe("Types and codes", func() {
	It("match the values IPv6 input asks for, and IANA's for ND and MLDv2", func() {
		Expect(uint8(icmpv6.TypeTimeExceeded)).To(Equal(ipv6.ICMPTimeExceeded))
		Expect(uint8(icmpv6.TypeParamProblem)).To(Equal(ipv6.ICMPParamProblem))
		Expect(icmpv6.CodeReasmExceeded).To(Equal(ipv6.CodeReasmTimeExceeded))
		Expect(icmpv6.CodeErroneousHeader).To(Equal(ipv6.CodeErroneousHeader))
		Expect(icmpv6.CodeUnknownNextHeader).To(Equal(ipv6.CodeUnknownNextHeader))
		Expect(icmpv6.CodeUnknownOption).To(Equal(ipv6.CodeUnknownOption))
		Expect(icmpv6.CodeIncompleteChain).To(Equal(ipv6.CodeIncompleteChain))
		Expect(icmpv6.NextHeader).To(Equal(ipv6.NextICMPv6))
		for t, x := range map[icmpv6.Type]xipv6.ICMPType{
			icmpv6.TypeDestUnreach: xipv6.ICMPTypeDestinationUnreachable, icmpv6.TypePacketTooBig: xipv6.ICMPTypePacketTooBig,
			icmpv6.TypeTimeExceeded: xipv6.ICMPTypeTimeExceeded, icmpv6.TypeParamProblem: xipv6.ICMPTypeParameterProblem,
			icmpv6.TypeEchoRequest: xipv6.ICMPTypeEchoRequest, icmpv6.TypeEchoReply: xipv6.ICMPTypeEchoReply,
			icmpv6.TypeRouterSolicitation: xipv6.ICMPTypeRouterSolicitation, icmpv6.TypeRouterAdvertisement: xipv6.ICMPTypeRouterAdvertisement,
			icmpv6.TypeNeighborSolicitation: xipv6.ICMPTypeNeighborSolicitation, icmpv6.TypeNeighborAdvertisement: xipv6.ICMPTypeNeighborAdvertisement,
			icmpv6.TypeRedirect: xipv6.ICMPTypeRedirect, icmpv6.TypeMLDQuery: xipv6.ICMPTypeMulticastListenerQuery,
			icmpv6.TypeMLDv2Report: xipv6.ICMPTypeVersion2MulticastListenerReport,
		} {
			Expect(int(t)).To(Equal(int(x)), x.String())
		}
		Expect(icmpv6.TypeParamProblem.IsError()).To(BeTrue())
		Expect(icmpv6.TypeEchoRequest.IsError()).To(BeFalse())
	})
})

var _ = Describe("Repr Parse and Emit (RFC 4443 sections 3 and 4)", func() {
	inv := packet(me, peer, ipv6.NextUDP, pattern(100))
	DescribeTable("round-trips", func(r icmpv6.Repr) {
		b := make([]byte, r.BufferLen())
		r.Emit(b, peer, me)
		back, err := icmpv6.Parse(b, peer, me, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(r))
	},
		Entry("echo request (4.1)", icmpv6.Repr{Type: icmpv6.TypeEchoRequest, Ident: 1, Seq: 2, Data: []byte("ping")}),
		Entry("echo reply (4.2)", icmpv6.Repr{Type: icmpv6.TypeEchoReply, Ident: 3, Seq: 4, Data: []byte{}}),
		Entry("destination unreachable, no route (3.1)", icmpv6.Repr{Type: icmpv6.TypeDestUnreach, Code: icmpv6.CodeNoRoute, Data: inv}),
		Entry("destination unreachable, port (3.1)", icmpv6.Repr{Type: icmpv6.TypeDestUnreach, Code: icmpv6.CodePortUnreach, Data: inv}),
		Entry("destination unreachable, reject route (3.1)", icmpv6.Repr{Type: icmpv6.TypeDestUnreach, Code: icmpv6.CodeRejectRoute, Data: inv}),
		Entry("packet too big with its 32-bit MTU (3.2)", icmpv6.Repr{Type: icmpv6.TypePacketTooBig, MTU: 70000, Data: inv}),
		Entry("time exceeded, reassembly (3.3)", icmpv6.Repr{Type: icmpv6.TypeTimeExceeded, Code: icmpv6.CodeReasmExceeded, Data: inv}),
		Entry("parameter problem with a 32-bit pointer (3.4)", icmpv6.Repr{Type: icmpv6.TypeParamProblem, Code: 2, Pointer: 70000, Data: inv}),
	)
	It("refuses short messages, bad checksums and errors that quote no IPv6 header", func() {
		_, err := icmpv6.Parse(make([]byte, 7), peer, me, false)
		Expect(err).To(Equal(icmpv6.ErrTruncated))
		r := icmpv6.Repr{Type: icmpv6.TypeEchoRequest, Data: pattern(10)}
		b := make([]byte, r.BufferLen())
		r.Emit(b, peer, me)
		b[9] ^= 1
		_, err = icmpv6.Parse(b, peer, me, true)
		Expect(err).To(Equal(icmpv6.ErrChecksum))
		_, err = icmpv6.Parse(b, peer, me, false) // hardware said good
		Expect(err).NotTo(HaveOccurred())
		r = icmpv6.Repr{Type: icmpv6.TypeDestUnreach, Data: inv[:39]}
		b = make([]byte, r.BufferLen())
		r.Emit(b, peer, me)
		_, err = icmpv6.Parse(b, peer, me, true)
		Expect(err).To(Equal(icmpv6.ErrBadQuote))
		var st icmpv6.Stats
		st.CountError(err)
		Expect(st.InErrors).To(Equal(uint64(1)))
		Expect(st.InBadQuote).To(Equal(uint64(1)))
	})
	It("parses unknown types, leaving them to the caller (section 2.4 (a), (b))", func() {
		b := []byte{200, 0, 0, 0, 1, 2, 3, 4}
		r, err := icmpv6.Parse(b, peer, me, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Type).To(Equal(icmpv6.Type(200)))
		var st icmpv6.Stats
		st.CountIn(r.Type)
		st.CountIn(icmpv6.Type(100))
		Expect(st.InUnknownInformational).To(Equal(uint64(1)))
		Expect(st.InUnknownErrors).To(Equal(uint64(1)))
	})
})

var _ = Describe("Error rules (RFC 4443 section 2.4)", func() {
	udp := packet(peer, me, ipv6.NextUDP, pattern(40))
	icmpErr := func(t icmpv6.Type) []byte {
		return packet(peer, me, ipv6.NextICMPv6, append([]byte{byte(t), 0, 0, 0, 0, 0, 0, 0}, pattern(40)...))
	}
	mcast := packet(peer, group, ipv6.NextUDP, pattern(40))

	DescribeTable("ErrorAllowed",
		func(inv []byte, t icmpv6.Type, code uint8, link bool, want icmpv6.Suppress) {
			Expect(icmpv6.ErrorAllowed(inv, t, code, link)).To(Equal(want))
		},
		Entry("a UDP packet to us", udp, icmpv6.TypeDestUnreach, icmpv6.CodePortUnreach, false, icmpv6.Allowed),
		Entry("(e.1) about an error message", icmpErr(icmpv6.TypeDestUnreach), icmpv6.TypeParamProblem, uint8(0), false, icmpv6.SuppressAboutError),
		Entry("(e.1) about a packet too big", icmpErr(icmpv6.TypePacketTooBig), icmpv6.TypeParamProblem, uint8(1), false, icmpv6.SuppressAboutError),
		Entry("about an echo request", icmpErr(icmpv6.TypeEchoRequest), icmpv6.TypeParamProblem, uint8(0), false, icmpv6.Allowed),
		Entry("(e.2) about a redirect", icmpErr(icmpv6.TypeRedirect), icmpv6.TypeParamProblem, uint8(0), false, icmpv6.SuppressAboutError),
		Entry("an ICMPv6 header cut off", packet(peer, me, ipv6.NextICMPv6, nil), icmpv6.TypeParamProblem, uint8(0), false, icmpv6.SuppressAboutError),
		Entry("(e.3) to a multicast address", mcast, icmpv6.TypeDestUnreach, icmpv6.CodePortUnreach, false, icmpv6.SuppressMulticast),
		Entry("(e.3) to a multicast address: packet too big is the exception", mcast, icmpv6.TypePacketTooBig, uint8(0), false, icmpv6.Allowed),
		Entry("(e.3) to a multicast address: parameter problem code 2 is the exception", mcast, icmpv6.TypeParamProblem, uint8(2), false, icmpv6.Allowed),
		Entry("(e.3) to a multicast address: parameter problem code 1 is not", mcast, icmpv6.TypeParamProblem, uint8(1), false, icmpv6.SuppressMulticast),
		Entry("(e.4, e.5) as a link-layer multicast or broadcast", udp, icmpv6.TypeParamProblem, uint8(0), true, icmpv6.SuppressMulticast),
		Entry("(e.4, e.5) as a link-layer multicast: code 2 is the exception", udp, icmpv6.TypeParamProblem, uint8(2), true, icmpv6.Allowed),
		Entry("(e.6) from the unspecified address", packet(ipv6.Addr{}, me, ipv6.NextUDP, nil), icmpv6.TypeParamProblem, uint8(2), false, icmpv6.SuppressSource),
		Entry("(e.6) from a multicast address", packet(group, me, ipv6.NextUDP, nil), icmpv6.TypeDestUnreach, uint8(4), false, icmpv6.SuppressSource),
		Entry("too short to be a packet", udp[:20], icmpv6.TypeDestUnreach, uint8(4), false, icmpv6.SuppressAboutError),
	)

	It("looks through extension headers for the ICMPv6 type", func() {
		inv := packet(peer, me, ipv6.NextDestOpts, append([]byte{ipv6.NextICMPv6, 0, 1, 4, 0, 0, 0, 0}, 1, 0, 0, 0, 0, 0, 0, 0))
		Expect(icmpv6.ErrorAllowed(inv, icmpv6.TypeParamProblem, 0, false)).To(Equal(icmpv6.SuppressAboutError))
	})

	It("quotes as much of the invoking packet as fits the 1280-byte minimum MTU (2.4 (c))", func() {
		big := packet(peer, me, ipv6.NextUDP, pattern(3000))
		e := icmpv6.NewErrors(nil, nil)
		out := make([]byte, icmpv6.ErrorPacketLen(big))
		n, s := e.Build(0, icmpv6.ErrorRequest{Type: icmpv6.TypeDestUnreach, Code: icmpv6.CodePortUnreach, Invoking: big}, out)
		Expect(s).To(Equal(icmpv6.Allowed))
		Expect(n).To(Equal(ipv6.MinMTU))
		h, err := ipv6.Parse(out[:n])
		Expect(err).NotTo(HaveOccurred())
		Expect(h.Src).To(Equal(me))
		Expect(h.Dst).To(Equal(peer))
		Expect(h.NextHeader).To(Equal(ipv6.NextICMPv6))
		r, err := icmpv6.Parse(out[ipv6.HeaderLen:n], h.Src, h.Dst, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Data).To(Equal(big[:ipv6.MinMTU-48]))
		small := packet(peer, me, ipv6.NextUDP, pattern(10))
		Expect(icmpv6.ErrorPacketLen(small)).To(Equal(48 + len(small)))
	})

	It("answers a multicast invoker from the interface's unicast address (2.2)", func() {
		e := icmpv6.NewErrors(nil, nil)
		inv := packet(peer, group, ipv6.NextUDP, pattern(8))
		out := make([]byte, icmpv6.ErrorPacketLen(inv))
		local := ipv6.Addr{0: 0xfe, 1: 0x80, 15: 1}
		n, s := e.Build(0, icmpv6.ErrorRequest{Type: icmpv6.TypeParamProblem, Code: 2, Param: 42, Invoking: inv, Local: local}, out)
		Expect(s).To(Equal(icmpv6.Allowed))
		Expect(ipv6.Packet(out[:n]).Src()).To(Equal(local))
		r, err := icmpv6.Parse(out[ipv6.HeaderLen:n], local, peer, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Pointer).To(Equal(uint32(42)))
	})

	It("builds the error IPv6 input asked for", func() {
		rc, err := ipv6.NewReceiver(ipv6.ReceiverConfig{}, nil)
		Expect(err).NotTo(HaveOccurred())
		res := rc.Input(0, packet(peer, me, 99, pattern(8)))
		req, ok := icmpv6.RequestFor(res, false, me)
		Expect(ok).To(BeTrue())
		Expect(req.Type).To(Equal(icmpv6.TypeParamProblem))
		Expect(req.Code).To(Equal(icmpv6.CodeUnknownNextHeader))
		Expect(req.Param).To(Equal(uint32(ipv6.OffNextHeader)))
		_, ok = icmpv6.RequestFor(rc.Input(0, packet(peer, me, ipv6.NextUDP, pattern(8))), false, me)
		Expect(ok).To(BeFalse())
	})

	It("rate-limits errors with a token bucket on the caller's clock (2.4 (f))", func() {
		lim, err := icmpv6.NewLimiter(icmpv6.LimiterConfig{Rate: 10, Burst: 3})
		Expect(err).NotTo(HaveOccurred())
		var st icmpv6.Stats
		e := icmpv6.NewErrors(lim, &st)
		out := make([]byte, ipv6.MinMTU)
		req := icmpv6.ErrorRequest{Type: icmpv6.TypeDestUnreach, Code: icmpv6.CodePortUnreach, Invoking: udp}
		sent := 0
		for range 10 {
			if n, _ := e.Build(time.Second, req, out); n > 0 {
				sent++
			}
		}
		Expect(sent).To(Equal(3)) // the burst
		n, s := e.Build(time.Second+99*time.Millisecond, req, out)
		Expect(n).To(BeZero())
		Expect(s).To(Equal(icmpv6.SuppressRateLimited))
		n, _ = e.Build(time.Second+100*time.Millisecond, req, out) // one token per 1/Rate
		Expect(n).NotTo(BeZero())
		Expect(st.OutRateLimited).To(Equal(uint64(8)))
		Expect(st.OutErrors).To(Equal(uint64(4)))
		Expect(st.OutDestUnreach).To(Equal(uint64(4)))
	})

	It("counts errors suppressed by rule", func() {
		var st icmpv6.Stats
		e := icmpv6.NewErrors(nil, &st)
		out := make([]byte, ipv6.MinMTU)
		e.Build(0, icmpv6.ErrorRequest{Type: icmpv6.TypeDestUnreach, Invoking: mcast}, out)
		e.Build(0, icmpv6.ErrorRequest{Type: icmpv6.TypeDestUnreach, Invoking: icmpErr(icmpv6.TypeTimeExceeded)}, out)
		Expect(st.OutSuppressedMulticast).To(Equal(uint64(1)))
		Expect(st.OutSuppressedAboutError).To(Equal(uint64(1)))
		Expect(st.OutMsgs).To(BeZero())
	})
})

var _ = Describe("EchoReply (RFC 4443 section 4.2)", func() {
	req := icmpv6.Repr{Type: icmpv6.TypeEchoRequest, Ident: 0x1234, Seq: 9, Data: pattern(56)}
	reply := func(cfg icmpv6.EchoConfig, to ipv6.Addr, st *icmpv6.Stats) []byte {
		out := make([]byte, icmpv6.EchoReplyLen(req))
		n := icmpv6.EchoReply(cfg, ipv6.Repr{Src: peer, Dst: to, TrafficClass: 0x20}, req, me, 0, out, st)
		return out[:n]
	}
	It("returns identifier, sequence number and data unchanged, from the address the request went to", func() {
		var st icmpv6.Stats
		p := reply(icmpv6.EchoConfig{}, me, &st)
		h, err := ipv6.Parse(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(h.Src).To(Equal(me))
		Expect(h.Dst).To(Equal(peer))
		Expect(h.HopLimit).To(Equal(uint8(ipv6.DefaultHopLimit)))
		r, err := icmpv6.Parse(p[ipv6.HeaderLen:], h.Src, h.Dst, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r).To(Equal(icmpv6.Repr{Type: icmpv6.TypeEchoReply, Ident: 0x1234, Seq: 9, Data: pattern(56)}))
		Expect(st.OutEchoReplies).To(Equal(uint64(1)))
	})
	It("answers a multicast request from a unicast address of the interface", func() {
		p := reply(icmpv6.EchoConfig{}, group, nil)
		Expect(ipv6.Packet(p).Src()).To(Equal(me))
	})
	It("ignores multicast requests when told to, and requests from no single node", func() {
		var st icmpv6.Stats
		Expect(reply(icmpv6.EchoConfig{IgnoreMulticast: true}, group, &st)).To(BeEmpty())
		out := make([]byte, icmpv6.EchoReplyLen(req))
		Expect(icmpv6.EchoReply(icmpv6.EchoConfig{}, ipv6.Repr{Src: ipv6.Addr{}, Dst: me}, req, me, 0, out, &st)).To(BeZero())
		Expect(st.InEchosIgnored).To(Equal(uint64(2)))
	})
})
