package ipv6_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

var _ = Describe("Receiver.Input: extension headers (RFC 8200 section 4)", func() {
	var (
		rc *ipv6.Receiver
		st *ipv6.Stats
	)
	BeforeEach(func() { rc, st = newReceiver(ipv6.ReceiverConfig{}) })

	deliver := func(p ipv6.Packet) ipv6.Result {
		res := rc.Input(0, p)
		Expect(res.Err).To(BeZero(), res.Err.Error())
		Expect(res.Action).To(Equal(ipv6.Deliver))
		return res
	}
	drop := func(p ipv6.Packet, want ipv6.Error, icmp ipv6.ICMPError) ipv6.Result {
		res := rc.Input(0, p)
		Expect(res.Action).To(Equal(ipv6.Drop))
		Expect(res.Err).To(Equal(want))
		Expect(res.ICMP).To(Equal(icmp))
		return res
	}
	pp := func(code uint8, ptr int) ipv6.ICMPError {
		return ipv6.ICMPError{Type: ipv6.ICMPParamProblem, Code: code, Pointer: uint32(ptr)}
	}

	It("delivers the upper layer after the fixed header", func() {
		res := deliver(packet(src, dst, ipv6.NextUDP, udp(16)))
		Expect(res.Proto).To(Equal(ipv6.NextUDP))
		Expect(res.Offset).To(Equal(ipv6.HeaderLen))
		Expect(res.ProtoPointer).To(Equal(ipv6.OffNextHeader))
		Expect(res.Payload()).To(Equal(udp(16)))
		Expect(st.InReceives).To(Equal(uint64(1)))
		Expect(st.InDelivers).To(Equal(uint64(1)))
	})

	It("walks hop-by-hop, destination options and a spent routing header to the upper layer", func() {
		p := packet(src, dst, ipv6.NextTCP, udp(20),
			opts(ipv6.NextHopByHop, ipv6.OptRouterAlert, 2, 0, 0),
			opts(ipv6.NextDestOpts),
			routing(4, 0),
			opts(ipv6.NextDestOpts, ipv6.OptTunnelEncapLimit, 1, 4))
		res := deliver(p)
		Expect(res.Proto).To(Equal(ipv6.NextTCP))
		Expect(res.Offset).To(Equal(ipv6.HeaderLen + 8 + 8 + 24 + 8))
		Expect(res.ProtoPointer).To(Equal(ipv6.HeaderLen + 8 + 8 + 24))
	})

	Context("section 4.1: hop-by-hop only right after the fixed header", func() {
		It("answers Parameter Problem code 1 at the Next Header field that names a later one", func() {
			p := packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts), opts(ipv6.NextHopByHop))
			drop(p, ipv6.ErrHopByHopNotFirst, pp(1, ipv6.HeaderLen))
			Expect(st.InUnknownProtos).To(Equal(uint64(1)))
			Expect(st.RxHopByHopNotFirst).To(Equal(uint64(1)))
		})
		It("does the same after a routing header", func() {
			p := packet(src, dst, ipv6.NextUDP, udp(8), routing(0, 0), opts(ipv6.NextHopByHop))
			drop(p, ipv6.ErrHopByHopNotFirst, pp(1, ipv6.HeaderLen))
		})
		It("accepts destination options twice, as section 4.1 lets a receiver", func() {
			deliver(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts), opts(ipv6.NextDestOpts)))
		})
	})

	Context("section 4.2: options by the two high-order bits of their type", func() {
		// 0x1e, 0x5e, 0x9e, 0xde: unassigned types with actions 00..11.
		At := ipv6.HeaderLen + 2 // the option's type byte
		It("skips Pad1 and PadN", func() {
			deliver(packet(src, dst, ipv6.NextUDP, udp(8),
				opts(ipv6.NextDestOpts, ipv6.OptPad1, ipv6.OptPad1, ipv6.OptPadN, 3, 0, 0, 0)))
		})
		It("00: skips an unknown option", func() {
			deliver(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, 0x1e, 2, 9, 9)))
		})
		It("01: discards silently", func() {
			drop(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, 0x5e, 0)),
				ipv6.ErrUnknownOption, ipv6.ICMPError{})
			Expect(st.InHdrErrors).To(Equal(uint64(1)))
			Expect(st.RxUnknownOption).To(Equal(uint64(1)))
		})
		It("10: discards with Parameter Problem code 2 at the option, to a multicast destination too", func() {
			drop(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextHopByHop, 0x9e, 0)),
				ipv6.ErrUnknownOption, pp(2, At))
			drop(packet(src, group, ipv6.NextUDP, udp(8), opts(ipv6.NextHopByHop, 0x9e, 0)),
				ipv6.ErrUnknownOption, pp(2, At))
		})
		It("11: discards with Parameter Problem code 2 only if the destination is not multicast", func() {
			drop(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, ipv6.OptPadN, 0, 0xde, 0)),
				ipv6.ErrUnknownOption, pp(2, At+2))
			drop(packet(src, group, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, 0xde, 0)),
				ipv6.ErrUnknownOption, ipv6.ICMPError{})
		})
		It("treats a jumbo payload option (RFC 2675, not implemented) as unknown: 11", func() {
			drop(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextHopByHop, 0xc2, 4, 0, 1, 0, 0)),
				ipv6.ErrUnknownOption, pp(2, At))
		})
		It("drops an option that runs past its header", func() {
			p := packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, 0x1e, 2, 0, 0))
			p[ipv6.HeaderLen+3] = 200
			drop(p, ipv6.ErrBadOption, ipv6.ICMPError{})
		})
		It("bounds the options of one header (Linux's max_dst_opts_number)", func() {
			var o []byte
			for range 9 {
				o = append(o, 0x1e, 0)
			}
			drop(packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, o...)), ipv6.ErrTooManyOptions, ipv6.ICMPError{})
			Expect(st.RxTooManyOptions).To(Equal(uint64(1)))
		})
	})

	Context("section 4.4: routing header", func() {
		It("ignores any routing type with segments left 0", func() {
			for _, rt := range []uint8{0, 2, 3, 4, 77} {
				deliver(packet(src, dst, ipv6.NextUDP, udp(8), routing(rt, 0)))
			}
		})
		It("answers Parameter Problem code 0 at the routing type when segments are left", func() {
			for _, rt := range []uint8{0, 4, 77} { // type 0 by RFC 5095 section 3
				drop(packet(src, dst, ipv6.NextUDP, udp(8), routing(rt, 1)), ipv6.ErrRoutingType, pp(0, ipv6.HeaderLen+2))
			}
			Expect(st.RxBadRoutingType).To(Equal(uint64(3)))
		})
	})

	It("answers Parameter Problem code 1 at the naming field for an upper layer with no handler (section 4)", func() {
		drop(packet(src, dst, 99, udp(8), opts(ipv6.NextDestOpts)), ipv6.ErrUnknownNextHeader, pp(1, ipv6.HeaderLen))
		drop(packet(src, dst, ipv6.NextESP, udp(8)), ipv6.ErrUnknownNextHeader, pp(1, ipv6.OffNextHeader))
		Expect(st.InUnknownProtos).To(Equal(uint64(2)))
	})

	It("delivers protocols the configuration names", func() {
		rc, _ = newReceiver(ipv6.ReceiverConfig{Protocols: ipv6.ProtoSet{}.Add(99)})
		Expect(rc.Input(0, packet(src, dst, 99, udp(8))).Action).To(Equal(ipv6.Deliver))
		Expect(rc.Input(0, packet(src, dst, ipv6.NextTCP, udp(20))).Err).To(Equal(ipv6.ErrUnknownNextHeader))
	})

	It("consumes next header 59 without error or delivery (section 4.7)", func() {
		drop(packet(src, dst, ipv6.NextNone, []byte{1, 2, 3}, opts(ipv6.NextDestOpts)), ipv6.ErrNoNextHeader, ipv6.ICMPError{})
		Expect(st.InNoNextHeader).To(Equal(uint64(1)))
		Expect(st.InHdrErrors).To(BeZero())
	})

	DescribeTable("counts malformed packets by reason",
		func(mangle func() []byte, want ipv6.Error, counter func(*ipv6.Stats) uint64) {
			res := rc.Input(0, mangle())
			Expect(res.Action).To(Equal(ipv6.Drop))
			Expect(res.Err).To(Equal(want))
			Expect(counter(st)).To(Equal(uint64(1)))
		},
		Entry("short", func() []byte { return make([]byte, 20) }, ipv6.ErrShort, func(s *ipv6.Stats) uint64 { return s.InHdrErrors }),
		Entry("version", func() []byte { p := packet(src, dst, ipv6.NextUDP, udp(8)); p[0] = 0x40; return p },
			ipv6.ErrVersion, func(s *ipv6.Stats) uint64 { return s.RxBadVersion }),
		Entry("truncated", func() []byte { return packet(src, dst, ipv6.NextUDP, udp(8))[:44] },
			ipv6.ErrTruncated, func(s *ipv6.Stats) uint64 { return s.InTruncatedPkts }),
		Entry("multicast source", func() []byte { return packet(group, dst, ipv6.NextUDP, udp(8)) },
			ipv6.ErrSrcMulticast, func(s *ipv6.Stats) uint64 { return s.InAddrErrors }),
		Entry("extension header past the payload", func() []byte {
			p := packet(src, dst, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts))
			p[ipv6.HeaderLen+1] = 5
			return p
		}, ipv6.ErrExtTruncated, func(s *ipv6.Stats) uint64 { return s.RxExtTruncated }),
		Entry("fragment header cut short", func() []byte {
			p := packet(src, dst, ipv6.NextUDP, nil, frag(0, true, 1))
			p = p[:ipv6.HeaderLen+4]
			p.SetPayloadLen(4)
			return p
		}, ipv6.ErrExtTruncated, func(s *ipv6.Stats) uint64 { return s.InHdrErrors }),
	)
})
