package iface_test

import (
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

type echo struct {
	from      [4]byte
	ident, sq uint16
	data      []byte
	at        time.Duration
}

func recordEchoes(n *node) *[]echo {
	var got []echo
	n.ifc.SetEchoHandler(func(now time.Duration, from [4]byte, ident, seq uint16, data []byte) {
		got = append(got, echo{from, ident, seq, append([]byte(nil), data...), now})
	})
	return &got
}

var _ = Describe("ICMP echo end to end", func() {
	var (
		a, b *node
		w    *wire
	)
	BeforeEach(func() {
		a, b = newNode(cfgA()), newNode(cfgB())
		w = &wire{a: a, b: b}
	})
	AfterEach(func() {
		// Every mbuf is back in its pool: nothing leaked.
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
		Expect(b.pool.Stats().InUse).To(BeZero())
	})

	It("resolves with ARP, pings and gets the reply", func() {
		got := recordEchoes(a)
		Expect(a.ifc.SendEcho(0, ipB, 0x77, 1, []byte("savanna ping"))).To(Succeed())
		w.pump(0)
		Expect(*got).To(HaveLen(1))
		Expect((*got)[0]).To(Equal(echo{ipB, 0x77, 1, []byte("savanna ping"), 0}))

		// ARP request, ARP reply, echo request, echo reply.
		Expect(w.frames).To(HaveLen(4))
		for _, f := range w.frames {
			Expect(len(f)).To(BeNumerically(">=", ether.MinFrameLen))
		}
		pkt := gopacket.NewPacket(w.frames[3], layers.LayerTypeEthernet, gopacket.Default)
		Expect(pkt.ErrorLayer()).To(BeNil())
		ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		Expect([]byte(ip.SrcIP.To4())).To(Equal(ipB[:]))
		ic := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		Expect(ic.TypeCode.Type()).To(Equal(uint8(layers.ICMPv4TypeEchoReply)))
		Expect(ic.Id).To(Equal(uint16(0x77)))

		sa, sb := a.ifc.Stats(), b.ifc.Stats()
		Expect(sa.ICMP.OutEchos).To(Equal(uint64(1)))
		Expect(sa.ICMP.InEchoReps).To(Equal(uint64(1)))
		Expect(sb.ICMP.InEchos).To(Equal(uint64(1)))
		Expect(sb.ICMP.OutEchoReps).To(Equal(uint64(1)))
		Expect(sb.ARP.Learned).To(Equal(uint64(1)), "B learnt A from the request aimed at it")
		Expect(sb.ARP.TxRequests).To(BeZero(), "so it replied without resolving")
		Expect(sa.ARP.PendingSent).To(Equal(uint64(1)))
		Expect(sa.IP.OutRequests).To(Equal(uint64(1)))
		Expect(sb.IP.InDelivers).To(Equal(uint64(1)))

		// A second ping goes straight out.
		w.frames = nil
		Expect(a.ifc.SendEcho(time.Millisecond, ipB, 0x77, 2, nil)).To(Succeed())
		w.pump(time.Millisecond)
		Expect(w.frames).To(HaveLen(2))
		Expect(*got).To(HaveLen(2))
	})

	It("pings with a datagram larger than the MTU both ways (fragmented, reassembled)", func() {
		got := recordEchoes(a)
		data := make([]byte, 4000)
		for i := range data {
			data[i] = byte(i)
		}
		Expect(a.ifc.SendEcho(0, ipB, 1, 1, data)).To(Succeed())
		w.pump(0)
		Expect(*got).To(HaveLen(1))
		Expect((*got)[0].data).To(Equal(data))
		sa, sb := a.ifc.Stats(), b.ifc.Stats()
		Expect(sa.IP.FragOKs).To(Equal(uint64(1)))
		Expect(sa.IP.FragCreates).To(Equal(uint64(3)))
		Expect(sb.IP.ReasmOKs).To(Equal(uint64(1)))
		Expect(sb.IP.FragCreates).To(Equal(uint64(3)))
		Expect(sa.IP.ReasmOKs).To(Equal(uint64(1)))
	})

	It("works with checksum offload on both sides", func() {
		a.link.off = hwAllOffloads
		b.link.off = hwAllOffloads
		a, b = newNodeLike(a, cfgA()), newNodeLike(b, cfgB())
		w = &wire{a: a, b: b}
		got := recordEchoes(a)
		Expect(a.ifc.SendEcho(0, ipB, 1, 1, []byte("x"))).To(Succeed())
		w.pump(0)
		Expect(*got).To(HaveLen(1))
		Expect(b.ifc.Stats().Tx.IPChecksumOffload).To(BeNumerically(">", 0))
	})

	It("ignores echo requests sent to a broadcast (RFC 1122 section 3.2.2.6)", func() {
		req := make([]byte, 8)
		icmp.Repr{Type: icmp.TypeEchoRequest, Ident: 1}.Emit(icmp.Packet(req))
		b.deliver(0, frame(ether.BroadcastAddr(), macA, datagram(ipA, [4]byte{10, 0, 0, 255}, ipv4.ProtoICMP, req)))
		b.deliver(0, frame(ether.BroadcastAddr(), macA, datagram(ipA, ipB, ipv4.ProtoICMP, req)))
		Expect(b.link.out).To(BeEmpty())
		Expect(b.ifc.Stats().ICMP.InEchosIgnored).To(Equal(uint64(2)))
	})

	It("answers an echo request with IP options by copy", func() {
		ic := make([]byte, 12)
		icmp.Repr{Type: icmp.TypeEchoRequest, Ident: 5, Seq: 6, Data: []byte("opts")}.Emit(icmp.Packet(ic))
		d := make([]byte, 24+len(ic))
		ipv4.Repr{Src: ipA, Dst: ipB, Protocol: ipv4.ProtoICMP, TTL: 64, PayloadLen: len(ic)}.Emit(ipv4.Packet(d), false)
		p := ipv4.Packet(d)
		p.SetVersionIHL(24)
		p.SetTotalLen(uint16(len(d)))
		copy(d[20:], []byte{1, 1, 1, 0}) // NOPs and end of list
		copy(d[24:], ic)
		p.FillChecksum()
		b.ifc.AddNeighbor(0, ipA, macA)
		b.deliver(0, frame(macB, macA, d))
		out := b.link.take()
		Expect(out).To(HaveLen(1))
		pkt := gopacket.NewPacket(out[0], layers.LayerTypeEthernet, gopacket.Default)
		Expect(pkt.ErrorLayer()).To(BeNil())
		icl := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		Expect(icl.TypeCode.Type()).To(Equal(uint8(layers.ICMPv4TypeEchoReply)))
		Expect(icl.Seq).To(Equal(uint16(6)))
		Expect(icmp.Packet(out[0][34:]).VerifyChecksum()).To(BeTrue())
	})

	It("refuses pings it cannot route", func() {
		Expect(a.ifc.SendEcho(0, [4]byte{8, 8, 8, 8}, 1, 1, nil)).To(MatchError(iface.ErrNoRoute))
		Expect(a.ifc.SendEcho(0, [4]byte{127, 0, 0, 1}, 1, 1, nil)).To(MatchError(iface.ErrBadAddress))
		Expect(a.ifc.SendEcho(0, ipA, 1, 1, nil)).To(MatchError(iface.ErrNoRoute))
		s := a.ifc.Stats()
		Expect(s.IP.OutNoRoutes).To(Equal(uint64(2)))
		Expect(s.Tx.BadAddress).To(Equal(uint64(1)))
	})

	It("sends off-link traffic to the gateway", func() {
		c := cfgA()
		c.Gateway = "10.0.0.2"
		a = newNode(c)
		w = &wire{a: a, b: b}
		Expect(a.ifc.SendEcho(0, [4]byte{8, 8, 8, 8}, 1, 1, nil)).To(Succeed())
		f := a.link.take()
		Expect(f).To(HaveLen(1))
		Expect(f[0][38:42]).To(Equal([]byte{10, 0, 0, 2}), "ARP for the gateway")
		a.ifc.Close()
	})
})

var hwAllOffloads = hwTxAll()

// newNodeLike rebuilds a node reading the (changed) offloads of old's link.
func newNodeLike(old *node, cfg iface.Config) *node {
	ifc, err := iface.New(cfg, old.link)
	Expect(err).NotTo(HaveOccurred())
	old.ifc = ifc
	old.rxFlags = hwRxGood
	return old
}
