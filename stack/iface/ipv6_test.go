package iface_test

import (
	"encoding/binary"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var (
	ip6A = mustAddr6("fd00::1")
	ip6B = mustAddr6("fd00::2")
)

func mustAddr6(s string) ipv6.Addr {
	a, err := ipv6.ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

func cfg6(addr string, mac ether.Addr) iface.Config {
	return iface.Config{MAC: mac.String(), IPv6: iface.IPv6Config{Address: addr}}
}

// settle runs both nodes' timers every 50 ms from..to, moving frames.
func (w *wire) settle(from, to time.Duration) {
	for now := from; now <= to; now += 50 * time.Millisecond {
		w.a.ifc.Poll(now)
		w.b.ifc.Poll(now)
		w.pump(now)
	}
}

// ip6Frame builds an Ethernet frame around an IPv6 packet.
func ip6Frame(dst, src ether.Addr, pkt []byte) []byte {
	b := make([]byte, ether.HeaderLen+len(pkt))
	ether.Repr{Dst: dst, Src: src, EtherType: ether.TypeIPv6}.Emit(ether.Frame(b))
	copy(b[ether.HeaderLen:], pkt)
	return b
}

var _ = Describe("IPv6 between two interfaces", func() {
	var (
		a, b *node
		w    *wire
	)
	BeforeEach(func() {
		a, b = newNode(cfg6("fd00::1/64", macA)), newNode(cfg6("fd00::2/64", macB))
		w = &wire{a: a, b: b}
		a.ifc.Start(0)
		b.ifc.Start(0)
		// RFC 4862 section 5.4: addresses are tentative until DAD
		// (a random delay up to 1 s, then RetransTimer) is over.
		w.settle(0, 3*time.Second)
	})
	AfterEach(func() {
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
		Expect(b.pool.Stats().InUse).To(BeZero())
	})

	It("assigns both addresses after Duplicate Address Detection (RFC 4862 section 5.4)", func() {
		Expect(a.ifc.IsAssigned6(ip6A)).To(BeTrue())
		Expect(a.ifc.IsAssigned6(a.ifc.LinkLocal6())).To(BeTrue())
		Expect(b.ifc.IsAssigned6(ip6B)).To(BeTrue())
		Expect(a.ifc.Stats6().NDP.TxDADSolicits).To(BeNumerically(">=", 2))
	})

	It("pings both ways after Neighbor Discovery resolves (RFC 4443 section 4, RFC 4861 section 7.2)", func() {
		var gotA, gotB []uint16
		a.ifc.SetEchoHandler6(func(_ time.Duration, from ipv6.Addr, id, seq uint16, data []byte) {
			Expect(from).To(Equal(ip6B))
			Expect(string(data)).To(Equal("ping6"))
			gotA = append(gotA, seq)
		})
		b.ifc.SetEchoHandler6(func(_ time.Duration, from ipv6.Addr, id, seq uint16, data []byte) {
			Expect(from).To(Equal(ip6A))
			gotB = append(gotB, seq)
		})
		now := 4 * time.Second
		Expect(a.ifc.SendEcho6(now, ip6B, 7, 1, []byte("ping6"))).To(Succeed())
		w.pump(now)
		Expect(b.ifc.SendEcho6(now, ip6A, 7, 2, []byte("ping6"))).To(Succeed())
		w.pump(now)
		Expect(gotA).To(Equal([]uint16{1}))
		Expect(gotB).To(Equal([]uint16{2}))
		na, ok := a.ifc.NDP().Neighbor(ip6B)
		Expect(ok).To(BeTrue())
		Expect(na.MAC).To(Equal(macB))
		Expect(a.ifc.Stats6().NDP.TxNeighborSolicits).To(BeNumerically(">=", 1))
		Expect(b.ifc.Stats6().ICMPv6.OutEchoReplies).To(BeEquivalentTo(1))
	})

	It("resolves with ND, then delivers a TCP segment with its checksum verified (RFC 8200 section 8.1)", func() {
		ft := &fakeTCP{}
		Expect(b.ifc.RegisterTransport(ipv4.ProtoTCP, ft)).To(Succeed())
		now := 4 * time.Second
		m := a.ifc.AllocTransport6()
		seg, _ := m.Append(20 + 5)
		binary.BigEndian.PutUint16(seg[0:], 40000)
		binary.BigEndian.PutUint16(seg[2:], 6379)
		seg[12], seg[13] = 5<<4, 0x18
		copy(seg[20:], "hello")
		Expect(a.ifc.OutputIPv6(now, m, ip6B, ipv6.NextTCP, iface.OutputOptions6{Checksum: iface.ChecksumTCP, FlowLabel: 0x12345})).To(Succeed())
		w.pump(now)
		Expect(ft.segs).To(HaveLen(1))
		s := ft.segs[0]
		Expect(s.V6).To(BeTrue())
		Expect(s.Src6).To(Equal(ip6A))
		Expect(s.Dst6).To(Equal(ip6B))
		Expect(s.FlowLabel).To(BeEquivalentTo(0x12345))
		Expect(string(ft.data[0][20:])).To(Equal("hello"))
		Expect(b.ifc.Stats().TCP.InSegs).To(BeEquivalentTo(1))
		Expect(a.ifc.Stats6().NDP.Resolved).To(BeEquivalentTo(1))
	})

	It("gives each connection its own stable flow label (RFC 6437 section 3)", func() {
		l1 := a.ifc.FlowLabel6(ip6A, ip6B, 6, 40000, 6379)
		Expect(l1).NotTo(BeZero())
		Expect(a.ifc.FlowLabel6(ip6A, ip6B, 6, 40000, 6379)).To(Equal(l1))
		Expect(a.ifc.FlowLabel6(ip6A, ip6B, 6, 40001, 6379)).NotTo(Equal(l1))
		Expect(l1 >> 20).To(BeZero())
	})

	It("fragments a UDP datagram larger than the MTU and reassembles it (RFC 8200 section 4.5)", func() {
		sb, err := b.ifc.ListenUDP(5353)
		Expect(err).NotTo(HaveOccurred())
		sa, err := a.ifc.ListenUDP(0)
		Expect(err).NotTo(HaveOccurred())
		payload := make([]byte, 4000)
		for k := range payload {
			payload[k] = byte(k * 7)
		}
		now := 4 * time.Second
		Expect(sa.SendTo6(now, payload, iface.UDPAddr6{IP: ip6B, Port: 5353})).To(Succeed())
		w.pump(now)
		buf := make([]byte, 5000)
		n, from, v6, ok := sb.RecvFrom6(buf)
		Expect(ok).To(BeTrue())
		Expect(v6).To(BeTrue())
		Expect(from.IP).To(Equal(ip6A))
		Expect(buf[:n]).To(Equal(payload))
		Expect(a.ifc.Stats6().IPv6.OutFragCreates).To(BeEquivalentTo(3))
		Expect(b.ifc.Stats6().IPv6.ReasmOKs).To(BeEquivalentTo(1))
	})

	It("answers a closed UDP port with destination unreachable code 4 (RFC 4443 section 3.1)", func() {
		sa, _ := a.ifc.ListenUDP(0)
		now := 4 * time.Second
		Expect(sa.SendTo6(now, []byte("x"), iface.UDPAddr6{IP: ip6B, Port: 9})).To(Succeed())
		w.pump(now)
		Expect(b.ifc.Stats().UDP.NoPorts).To(BeEquivalentTo(1))
		Expect(b.ifc.Stats6().ICMPv6.OutDestUnreach).To(BeEquivalentTo(1))
		Expect(a.ifc.Stats().UDP.InICMPErrors).To(BeEquivalentTo(1))
		Expect(sa.Stats().ICMPErrors).To(BeEquivalentTo(1))
	})

	It("lowers the path MTU and the MSS on Packet Too Big, and fragments to it (RFC 8201 section 4)", func() {
		now := 4 * time.Second
		Expect(a.ifc.PathMSS6(now, ip6B)).To(Equal(1440))
		// A router on the path reports an MTU of 1280 about a packet of
		// ours to fd00::2.
		quoted := make([]byte, ipv6.HeaderLen+20)
		ipv6.Repr{Src: ip6A, Dst: ip6B, NextHeader: ipv6.NextTCP, PayloadLen: 1400, HopLimit: 64}.Emit(ipv6.Packet(quoted))
		r := icmpv6.Repr{Type: icmpv6.TypePacketTooBig, MTU: 1280, Data: quoted}
		pkt := make([]byte, ipv6.HeaderLen+r.BufferLen())
		ipv6.Repr{Src: ip6B, Dst: ip6A, NextHeader: ipv6.NextICMPv6, PayloadLen: r.BufferLen(), HopLimit: 64}.Emit(ipv6.Packet(pkt))
		r.Emit(pkt[ipv6.HeaderLen:], ip6B, ip6A)
		ft := &fakeTCP{}
		Expect(a.ifc.RegisterTransport(ipv4.ProtoTCP, ft)).To(Succeed())
		a.deliver(now, ip6Frame(macA, macB, pkt))
		Expect(a.ifc.PathMTU6(now, ip6B)).To(Equal(1280))
		Expect(a.ifc.PathMSS6(now, ip6B)).To(Equal(1220))
		Expect(a.ifc.Stats6().PMTU.Lowered).To(BeEquivalentTo(1))
		Expect(a.ifc.Stats().TCP.InICMPErrors).To(BeZero()) // fakeTCP is no ErrorHandler6
		// A 1400-byte datagram now leaves in fragments of at most 1280.
		sa, _ := a.ifc.ListenUDP(0)
		Expect(sa.SendTo6(now, make([]byte, 1400), iface.UDPAddr6{IP: ip6B, Port: 9})).To(Succeed())
		for _, f := range a.link.take() {
			Expect(len(f) - ether.HeaderLen).To(BeNumerically("<=", 1280))
		}
		Expect(a.ifc.Stats6().IPv6.OutFragOKs).To(BeEquivalentTo(1))
		// Below the minimum MTU is refused (RFC 8201 section 4).
		r.MTU = 1000
		r.Emit(pkt[ipv6.HeaderLen:], ip6B, ip6A)
		a.deliver(now, ip6Frame(macA, macB, pkt))
		Expect(a.ifc.Stats6().PMTU.BelowMinimum).To(BeEquivalentTo(1))
		Expect(a.ifc.PathMTU6(now, ip6B)).To(Equal(1280))
	})

	It("counts and drops malformed IPv6 packets, and answers an unknown next header (RFC 8200 section 4)", func() {
		now := 4 * time.Second
		// Truncated: a payload length past the frame.
		bad := make([]byte, ipv6.HeaderLen+8)
		ipv6.Repr{Src: ip6B, Dst: ip6A, NextHeader: ipv6.NextUDP, PayloadLen: 200, HopLimit: 64}.Emit(ipv6.Packet(bad))
		a.deliver(now, ip6Frame(macA, macB, bad))
		// Version 4 in an 0x86DD frame.
		v4 := make([]byte, ipv6.HeaderLen)
		copy(v4, bad)
		v4[0] = 0x45
		a.deliver(now, ip6Frame(macA, macB, v4))
		// An unknown upper layer (253): Parameter Problem code 1.
		unk := make([]byte, ipv6.HeaderLen+8)
		ipv6.Repr{Src: ip6B, Dst: ip6A, NextHeader: 253, PayloadLen: 8, HopLimit: 64}.Emit(ipv6.Packet(unk))
		a.deliver(now, ip6Frame(macA, macB, unk))
		// Not ours.
		other := make([]byte, ipv6.HeaderLen+8)
		ipv6.Repr{Src: ip6B, Dst: mustAddr6("fd00::99"), NextHeader: ipv6.NextUDP, PayloadLen: 8, HopLimit: 64}.Emit(ipv6.Packet(other))
		a.deliver(now, ip6Frame(macA, macB, other))
		s := a.ifc.Stats6()
		Expect(s.IPv6.InTruncatedPkts).To(BeEquivalentTo(1))
		Expect(s.IPv6.RxBadVersion).To(BeEquivalentTo(1))
		Expect(s.IPv6.InUnknownProtos).To(BeEquivalentTo(1))
		Expect(s.ICMPv6.OutParmProbs).To(BeEquivalentTo(1))
		Expect(s.Out.RxNotOurs).To(BeEquivalentTo(1))
		Expect(s.IPv6.InAddrErrors).To(BeEquivalentTo(1))
	})

	It("drops multicast frames to groups it does not listen to, and loads the NIC filter (RFC 2464 section 7)", func() {
		now := 4 * time.Second
		g := mustAddr6("ff02::1:ff00:99")
		pkt := make([]byte, ipv6.HeaderLen+8)
		ipv6.Repr{Src: ip6B, Dst: g, NextHeader: ipv6.NextUDP, PayloadLen: 8, HopLimit: 64}.Emit(ipv6.Packet(pkt))
		// The peer's MLD reports (to ff02::16, which a host does not
		// listen to) were filtered during DAD already: count from here.
		before, before6 := a.ifc.Stats().Eth.RxMulticast, a.ifc.Stats6().Out.RxMulticastFiltered
		a.deliver(now, ip6Frame(ether.Addr(g.MulticastMAC()), macB, pkt))
		Expect(a.ifc.Stats().Eth.RxMulticast - before).To(BeEquivalentTo(1))
		Expect(a.ifc.Stats6().Out.RxMulticastFiltered - before6).To(BeEquivalentTo(1))
		Expect(a.link.mcast).To(ContainElement(ether.Addr(ip6A.SolicitedNode().MulticastMAC())))
	})
})

var _ = Describe("Duplicate Address Detection over the wire", func() {
	It("catches a duplicate static address and never uses it (RFC 4862 section 5.4.5)", func() {
		a, b := newNode(cfg6("fd00::1/64", macA)), newNode(cfg6("fd00::1/64", macB))
		w := &wire{a: a, b: b}
		b.ifc.Start(0)
		w.settle(0, 3*time.Second) // b owns fd00::1
		Expect(b.ifc.IsAssigned6(ip6A)).To(BeTrue())
		a.ifc.Start(3 * time.Second)
		w.settle(3*time.Second, 6*time.Second)
		Expect(a.ifc.IsAssigned6(ip6A)).To(BeFalse())
		Expect(a.ifc.Stats6().NDP.DADDuplicates).To(BeEquivalentTo(1))
		Expect(a.ifc.SendEcho6(6*time.Second, ip6B, 1, 1, nil)).To(MatchError(iface.ErrNoSource))
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
	})
})

var _ = Describe("IPv6 configuration", func() {
	It("names the key at fault", func() {
		_, err := iface.New(cfg6("10.0.0.1/24", macA), &link{pool: newPool(4, 2048)})
		Expect(err).To(MatchError(ContainSubstring("ipv6.address")))
		c := cfg6("fd00::1/64", macA)
		c.MTU = 1000
		_, err = iface.New(c, &link{pool: newPool(4, 2048)})
		Expect(err).To(MatchError(ContainSubstring("mtu: 1000")))
	})
	It("leaves an IPv4-only interface deaf to IPv6 (counted as an unknown EtherType)", func() {
		n := newNode(cfgA())
		pkt := make([]byte, ipv6.HeaderLen)
		ipv6.Repr{Src: ip6B, Dst: ip6A, NextHeader: ipv6.NextNone, HopLimit: 64}.Emit(ipv6.Packet(pkt))
		n.deliver(0, ip6Frame(macA, macB, pkt))
		Expect(n.ifc.Stats().Eth.RxUnknownEtherType).To(BeEquivalentTo(1))
		Expect(n.ifc.HasIPv6()).To(BeFalse())
	})
})

var (
	_ = hw.Mbuf{}
	_ = ndp.Config{}
	_ = tcp.IP{}
)
