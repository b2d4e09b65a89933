package icmp_test

import (
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

var (
	us   = [4]byte{10, 0, 0, 1}
	peer = [4]byte{10, 0, 0, 2}
)

// offending builds a UDP-looking datagram from peer to us.
func offending(proto ipv4.Protocol, payload []byte) ipv4.Packet {
	b := make([]byte, 20+len(payload))
	ipv4.Repr{Src: peer, Dst: us, Protocol: proto, TTL: 64, PayloadLen: len(payload)}.Emit(ipv4.Packet(b), true)
	copy(b[20:], payload)
	return ipv4.Packet(b)
}

func emit(r icmp.Repr) icmp.Packet {
	b := make([]byte, r.BufferLen())
	r.Emit(icmp.Packet(b))
	return icmp.Packet(b)
}

var _ = Describe("Packet", func() {
	It("round-trips an echo request", func() {
		r := icmp.Repr{Type: icmp.TypeEchoRequest, Ident: 0x1234, Seq: 7, Data: []byte("ping data")}
		p := emit(r)
		Expect(p.VerifyChecksum()).To(BeTrue())
		got, err := icmp.Parse(p, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(r))
	})
	It("emits in place without copying over itself", func() {
		b := make([]byte, 8+4)
		copy(b[8:], "abcd")
		icmp.Repr{Type: icmp.TypeEchoReply, Ident: 1, Seq: 2, Data: b[8:]}.Emit(icmp.Packet(b))
		Expect(string(b[8:])).To(Equal("abcd"))
		Expect(icmp.Packet(b).VerifyChecksum()).To(BeTrue())
	})
	It("builds errors quoting the header and 8 bytes (RFC 792)", func() {
		orig := offending(ipv4.ProtoUDP, []byte("0123456789abcdef"))
		quote := icmp.QuoteOf(orig)
		Expect(quote).To(HaveLen(28))
		b := make([]byte, icmp.ErrorLen(quote))
		n := icmp.EmitError(icmp.Packet(b), icmp.TypeDestUnreach, icmp.CodeFragNeeded, 1400, quote)
		Expect(n).To(Equal(36))
		got, err := icmp.Parse(icmp.Packet(b), true)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.MTU).To(Equal(uint16(1400)))
		q, err := icmp.Quoted(got.Data)
		Expect(err).NotTo(HaveOccurred())
		Expect(q.Src()).To(Equal(peer))
		Expect([]byte(q[20:])).To(Equal([]byte("01234567")))

		n = icmp.EmitError(icmp.Packet(b), icmp.TypeParamProblem, 0, 9, quote)
		got, _ = icmp.Parse(icmp.Packet(b[:n]), true)
		Expect(got.Pointer).To(Equal(uint8(9)))
	})
	It("agrees with gopacket both ways", func() {
		orig := offending(ipv4.ProtoUDP, make([]byte, 8))
		p := emit(icmp.Repr{Type: icmp.TypeDestUnreach, Code: icmp.CodePortUnreach, Data: orig})
		pkt := gopacket.NewPacket(p, layers.LayerTypeICMPv4, gopacket.Default)
		l := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		Expect(l.TypeCode).To(Equal(layers.CreateICMPv4TypeCode(3, 3)))
		Expect(l.Checksum).To(Equal(p.Checksum()))

		buf := gopacket.NewSerializeBuffer()
		Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true},
			&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 42, Seq: 3},
			gopacket.Payload([]byte("xyz")))).To(Succeed())
		got, err := icmp.Parse(icmp.Packet(buf.Bytes()), true)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(icmp.Repr{Type: icmp.TypeEchoRequest, Ident: 42, Seq: 3, Data: []byte("xyz")}))
	})
	DescribeTable("rejects malformed messages", func(b []byte, want icmp.Error) {
		_, err := icmp.Parse(icmp.Packet(b), true)
		Expect(err).To(Equal(want))
		var st icmp.Stats
		st.CountError(err)
		Expect(st.InErrors).To(Equal(uint64(1)))
		Expect(st.InTruncated + st.InCsumErrors + st.InBadQuote).To(Equal(uint64(1)))
	},
		Entry("short", []byte{8, 0, 0}, icmp.ErrTruncated),
		Entry("checksum", func() []byte { p := emit(icmp.Repr{Type: icmp.TypeEchoRequest}); p[5]++; return p }(), icmp.ErrChecksum),
		Entry("error without quote", []byte(emit(icmp.Repr{Type: icmp.TypeDestUnreach, Data: make([]byte, 10)})), icmp.ErrBadQuote),
		Entry("error with bad quoted version", []byte(emit(icmp.Repr{Type: icmp.TypeTimeExceeded, Data: make([]byte, 28)})), icmp.ErrBadQuote),
		Entry("error quoting less than 8 bytes", []byte(emit(icmp.Repr{Type: icmp.TypeTimeExceeded, Data: offending(17, make([]byte, 4))})), icmp.ErrBadQuote),
	)
	It("names every error", func() {
		for _, e := range []icmp.Error{icmp.ErrTruncated, icmp.ErrChecksum, icmp.ErrBadQuote} {
			Expect(e.Name()).NotTo(Equal("unknown"))
			Expect(e.Error()).To(HavePrefix("icmp: "))
		}
	})
})

var _ = Describe("ErrorAllowed (RFC 1122 section 3.2.2)", func() {
	udp := offending(ipv4.ProtoUDP, make([]byte, 8))
	DescribeTable("decides", func(mutate func(p ipv4.Packet) (ipv4.Packet, bool, bool), want icmp.Suppress) {
		p := append(ipv4.Packet(nil), udp...)
		p, link, dstB := mutate(p)
		Expect(icmp.ErrorAllowed(p, link, dstB)).To(Equal(want))
		Expect(want.Name()).NotTo(Equal("unknown"))
	},
		Entry("plain UDP", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { return p, false, false }, icmp.Allowed),
		Entry("link broadcast", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { return p, true, false }, icmp.SuppressBroadcast),
		Entry("directed broadcast", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { return p, false, true }, icmp.SuppressBroadcast),
		Entry("limited broadcast", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { p.SetDst(ipv4.Broadcast()); return p, false, false }, icmp.SuppressBroadcast),
		Entry("multicast", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { p.SetDst([4]byte{224, 0, 0, 9}); return p, false, false }, icmp.SuppressBroadcast),
		Entry("non-initial fragment", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { p.SetFrag(false, false, 8); return p, false, false }, icmp.SuppressFragment),
		Entry("zero source", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { p.SetSrc([4]byte{}); return p, false, false }, icmp.SuppressSource),
		Entry("loopback source", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { p.SetSrc([4]byte{127, 0, 0, 1}); return p, false, false }, icmp.SuppressSource),
		Entry("class E source", func(p ipv4.Packet) (ipv4.Packet, bool, bool) { p.SetSrc([4]byte{250, 0, 0, 1}); return p, false, false }, icmp.SuppressSource),
		Entry("about an ICMP error", func(p ipv4.Packet) (ipv4.Packet, bool, bool) {
			p.SetProtocol(ipv4.ProtoICMP)
			p[20] = uint8(icmp.TypeDestUnreach)
			return p, false, false
		}, icmp.SuppressAboutError),
		Entry("about an unknown ICMP type", func(p ipv4.Packet) (ipv4.Packet, bool, bool) {
			p.SetProtocol(ipv4.ProtoICMP)
			p[20] = 200
			return p, false, false
		}, icmp.SuppressAboutError),
		Entry("about an echo request", func(p ipv4.Packet) (ipv4.Packet, bool, bool) {
			p.SetProtocol(ipv4.ProtoICMP)
			p[20] = uint8(icmp.TypeEchoRequest)
			return p, false, false
		}, icmp.Allowed),
	)
	It("counts suppressions and messages by type", func() {
		var st icmp.Stats
		for _, s := range []icmp.Suppress{icmp.SuppressAboutError, icmp.SuppressBroadcast, icmp.SuppressFragment, icmp.SuppressSource} {
			st.CountSuppress(s)
		}
		Expect(st.OutSuppressedAboutError + st.OutSuppressedBroadcast + st.OutSuppressedFragment + st.OutSuppressedSource).To(Equal(uint64(4)))
		st.CountOut(icmp.TypeDestUnreach)
		st.CountOut(icmp.TypeEchoReply)
		Expect(st.OutMsgs).To(Equal(uint64(2)))
		Expect(st.OutErrors).To(Equal(uint64(1)))
		st.CountIn(icmp.TypeEchoRequest)
		st.CountIn(icmp.Type(42))
		Expect(st.InEchos).To(Equal(uint64(1)))
		Expect(st.InOtherTypes).To(Equal(uint64(1)))
	})
})

var _ = Describe("Limiter", func() {
	It("allows a burst, then the sustained rate", func() {
		l, err := icmp.NewLimiter(icmp.LimiterConfig{Rate: 10, Burst: 3})
		Expect(err).NotTo(HaveOccurred())
		n := 0
		for range 10 {
			if l.Allow(0) {
				n++
			}
		}
		Expect(n).To(Equal(3))
		Expect(l.Allow(50 * time.Millisecond)).To(BeFalse())
		Expect(l.Allow(100 * time.Millisecond)).To(BeTrue())
		Expect(l.Allow(100 * time.Millisecond)).To(BeFalse())
		// One second at 10/s, capped by the burst of 3.
		n = 0
		for k := range 100 {
			if l.Allow(time.Second + time.Duration(k)*time.Millisecond) {
				n++
			}
		}
		Expect(n).To(Equal(3 + 0))
		n = 0
		for k := range 1000 {
			if l.Allow(2*time.Second + time.Duration(k)*time.Millisecond) {
				n++
			}
		}
		Expect(n).To(BeNumerically("~", 3+10, 1))
	})
	It("never goes backwards on a clock that does", func() {
		l, _ := icmp.NewLimiter(icmp.LimiterConfig{Rate: 1, Burst: 1})
		Expect(l.Allow(10 * time.Second)).To(BeTrue())
		Expect(l.Allow(5 * time.Second)).To(BeFalse())
		Expect(l.Allow(11 * time.Second)).To(BeTrue())
	})
	It("can be unlimited", func() {
		l, _ := icmp.NewLimiter(icmp.LimiterConfig{Unlimited: true})
		for range 1000 {
			Expect(l.Allow(0)).To(BeTrue())
		}
	})
	DescribeTable("validates", func(c icmp.LimiterConfig, key string) {
		_, err := icmp.NewLimiter(c)
		Expect(err).To(MatchError(ContainSubstring(key + ":")))
	},
		Entry(nil, icmp.LimiterConfig{Rate: -1}, "rate"),
		Entry(nil, icmp.LimiterConfig{Burst: -1}, "burst"),
	)
})
