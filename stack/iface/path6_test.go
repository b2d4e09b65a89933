package iface_test

import (
	"encoding/binary"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// naFrame builds a Neighbor Advertisement from src's owner to dst,
// answering for src with MAC mac, in an Ethernet frame from mac to to.
func naFrame(src, dst ipv6.Addr, mac, to ether.Addr, solicited bool) []byte {
	na := ndp.NeighborAdvert{Solicited: solicited, Override: true, Target: src,
		Options: ndp.Options{TargetLinkAddr: mac, HasTargetLinkAddr: true}}
	pkt := make([]byte, ipv6.HeaderLen+na.Len())
	ipv6.Repr{Src: src, Dst: dst, NextHeader: ipv6.NextICMPv6, PayloadLen: na.Len(), HopLimit: ndp.HopLimit}.Emit(ipv6.Packet(pkt))
	na.Emit(pkt[ipv6.HeaderLen:], src, dst)
	return ip6Frame(to, mac, pkt)
}

// tcpSeg6 sends a bare TCP header from a to dst and returns the frames
// a transmitted.
func tcpSeg6(n *node, now time.Duration, dst ipv6.Addr) [][]byte {
	m := n.ifc.AllocTransport6()
	seg, _ := m.Append(20)
	binary.BigEndian.PutUint16(seg[0:], 40000)
	binary.BigEndian.PutUint16(seg[2:], 6379)
	seg[12], seg[13] = 5<<4, 0x10
	Expect(n.ifc.OutputIPv6(now, m, dst, ipv6.NextTCP, iface.OutputOptions6{Checksum: iface.ChecksumTCP})).To(Succeed())
	return n.link.take()
}

var _ = Describe("IPv6 output's cached path (Linux's sk_dst_cache, net/ipv6/route.c)", func() {
	var (
		a, b *node
		w    *wire
	)
	BeforeEach(func() {
		a, b = newNode(cfg6("fd00::1/64", macA)), newNode(cfg6("fd00::2/64", macB))
		w = &wire{a: a, b: b}
		a.ifc.Start(0)
		b.ifc.Start(0)
		w.settle(0, 3*time.Second)
		// Resolve b at a, so that the path is filled.
		Expect(a.ifc.SendEcho6(4*time.Second, ip6B, 1, 1, nil)).To(Succeed())
		w.pump(4 * time.Second)
	})
	AfterEach(func() {
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
		Expect(b.pool.Stats().InUse).To(BeZero())
	})

	It("sends the next segment to a neighbour's new MAC once an advertisement changed it mid-connection (RFC 4861 section 7.2.5)", func() {
		now := 4*time.Second + time.Millisecond
		f := tcpSeg6(a, now, ip6B)
		Expect(f).To(HaveLen(1))
		Expect(ether.Frame(f[0]).Dst()).To(Equal(macB))
		f = tcpSeg6(a, now, ip6B)
		Expect(ether.Frame(f[0]).Dst()).To(Equal(macB), "from the cached path")

		// b's NIC is replaced: a solicited, override advertisement with
		// the new MAC keeps the entry REACHABLE, with the new address.
		macNew := ether.Addr{0x02, 0, 0, 0, 0, 0x0c}
		a.deliver(now, naFrame(ip6B, ip6A, macNew, macA, true))
		e, ok := a.ifc.NDP().Neighbor(ip6B)
		Expect(ok).To(BeTrue())
		Expect(e.MAC).To(Equal(macNew))
		Expect(e.State).To(Equal(ndp.Reachable))

		f = tcpSeg6(a, now+time.Millisecond, ip6B)
		Expect(f).To(HaveLen(1))
		Expect(ether.Frame(f[0]).Dst()).To(Equal(macNew))
	})

	It("confirms reachability through the cached path as Confirm does: the deadline moves with every confirmation (RFC 4861 section 7.3.1)", func() {
		now := 4*time.Second + time.Millisecond
		tcpSeg6(a, now, ip6B)
		before := a.ifc.Stats6().NDP.Confirmations
		rt := a.ifc.NDP().ReachableTime()
		// Confirmed at every step, the entry never leaves REACHABLE, though
		// the steps add up to many ReachableTimes.
		for k := 1; k <= 10; k++ {
			t := now + time.Duration(k)*rt/2
			a.ifc.Confirm6(t, ip6B)
			a.ifc.Poll(t)
			e, _ := a.ifc.NDP().Neighbor(ip6B)
			Expect(e.State).To(Equal(ndp.Reachable), "step %d", k)
		}
		Expect(a.ifc.Stats6().NDP.Confirmations - before).To(BeEquivalentTo(10))
		// Unconfirmed, it goes STALE after ReachableTime.
		t := now + 5*rt + rt + time.Millisecond
		a.ifc.Poll(t)
		e, _ := a.ifc.NDP().Neighbor(ip6B)
		Expect(e.State).To(Equal(ndp.Stale))
		w.pump(t)
	})
})
