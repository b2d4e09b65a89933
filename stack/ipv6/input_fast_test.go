package ipv6_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

var _ = Describe("Receiver.Input: a packet without extension headers (RFC 8200 sections 3 and 4)", func() {
	isExt := func(nh uint8) bool {
		switch nh {
		case ipv6.NextHopByHop, ipv6.NextRouting, ipv6.NextFragment, ipv6.NextDestOpts, ipv6.NextNone:
			return true
		}
		return false
	}

	It("delivers every configured upper layer from byte 40, and answers Parameter Problem code 1 at byte 6 for any other", func() {
		rc, st := newReceiver(ipv6.ReceiverConfig{Protocols: ipv6.ProtoSet{}.Add(ipv6.NextTCP).Add(200)})
		var delivered, refused uint64
		for nh := range 256 {
			if isExt(uint8(nh)) {
				continue
			}
			p := packet(src, dst, uint8(nh), udp(24))
			// Ethernet padding after the payload length is not the packet's.
			res := rc.Input(0, append(append([]byte(nil), p...), 0, 0, 0, 0))
			Expect(res.Packet).To(Equal(p), "next header %d", nh)
			if uint8(nh) == ipv6.NextTCP || nh == 200 {
				delivered++
				Expect(res).To(Equal(ipv6.Result{Action: ipv6.Deliver, Packet: p, Proto: uint8(nh), Offset: ipv6.HeaderLen, ProtoPointer: ipv6.OffNextHeader}))
				continue
			}
			refused++
			Expect(res.Action).To(Equal(ipv6.Drop), "next header %d", nh)
			Expect(res.Err).To(Equal(ipv6.ErrUnknownNextHeader))
			Expect(res.ICMP).To(Equal(ipv6.ICMPError{Type: ipv6.ICMPParamProblem, Code: 1, Pointer: ipv6.OffNextHeader}))
		}
		Expect(st.InDelivers).To(Equal(delivered))
		Expect(st.InUnknownProtos).To(Equal(refused))
		Expect(st.InReceives).To(Equal(delivered + refused))
	})

	It("checks the fixed header first: version, payload length, a multicast source", func() {
		rc, st := newReceiver(ipv6.ReceiverConfig{})
		p := packet(src, dst, ipv6.NextTCP, udp(24))
		bad := append([]byte(nil), p...)
		bad[0] = 0x50
		Expect(rc.Input(0, bad).Err).To(Equal(ipv6.ErrVersion))
		Expect(rc.Input(0, p[:len(p)-1]).Err).To(Equal(ipv6.ErrTruncated))
		Expect(rc.Input(0, p[:ipv6.HeaderLen-1]).Err).To(Equal(ipv6.ErrShort))
		m := packet(ipv6.AllNodes(), dst, ipv6.NextTCP, udp(24))
		Expect(rc.Input(0, m).Err).To(Equal(ipv6.ErrSrcMulticast))
		Expect(st.InDelivers).To(BeZero())
		Expect(st.InReceives).To(Equal(uint64(4)))
	})
})
