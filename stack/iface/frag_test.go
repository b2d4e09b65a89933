package iface_test

import (
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/ip4defrag"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

var _ = Describe("Fragmentation on send", func() {
	DescribeTable("cuts datagrams at the MTU, with offsets and MF bits gopacket agrees with",
		func(mtu, room, size int, wantSizes []int) {
			c := cfgA()
			c.MTU = mtu
			a := newNodeRoom(c, room)
			a.ifc.AddNeighbor(0, ipB, macB)
			cli, _ := a.ifc.ListenUDP(1234)
			payload := make([]byte, size)
			for i := range payload {
				payload[i] = byte(i * 13)
			}
			Expect(cli.SendTo(0, payload, iface.UDPAddr{IP: ipB, Port: 7})).To(Succeed())
			frames := a.link.take()
			Expect(frames).To(HaveLen(len(wantSizes)))

			defrag := ip4defrag.NewIPv4Defragmenter()
			var whole *layers.IPv4
			off := 0
			var st ipv4.Stats
			ra, _ := ipv4.NewReassembler(ipv4.ReasmConfig{}, &st)
			var ours ipv4.Packet
			for k, f := range frames {
				pkt := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.Default)
				ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
				Expect(int(ip.Length)-20).To(Equal(wantSizes[k]), "fragment %d size", k)
				Expect(int(ip.Length)).To(BeNumerically("<=", mtu))
				Expect(int(ip.FragOffset)*8).To(Equal(off), "fragment %d offset", k)
				last := k == len(frames)-1
				Expect(ip.Flags&layers.IPv4MoreFragments != 0).To(Equal(!last), "fragment %d MF", k)
				Expect(ip.Flags & layers.IPv4DontFragment).To(BeZero())
				if !last {
					Expect(wantSizes[k] % 8).To(BeZero())
				}
				Expect(ipv4.Packet(f[14:]).VerifyChecksum()).To(BeTrue())
				off += wantSizes[k]
				out, err := defrag.DefragIPv4(ip)
				Expect(err).NotTo(HaveOccurred())
				if out != nil {
					whole = out
				}
				// And our own reassembler.
				p, err := ipv4.Check(f[14:])
				Expect(err).NotTo(HaveOccurred())
				r, err := ipv4.Parse(p, true)
				Expect(err).NotTo(HaveOccurred())
				d, err := ra.Input(0, p, r)
				Expect(err).NotTo(HaveOccurred())
				if d != nil {
					ours = append(ipv4.Packet(nil), d...)
				}
			}
			Expect(whole).NotTo(BeNil(), "gopacket reassembled it")
			u := gopacket.NewPacket(whole.Payload, layers.LayerTypeUDP, gopacket.Default).Layer(layers.LayerTypeUDP).(*layers.UDP)
			Expect(u.Payload).To(Equal(payload))
			Expect(ours).NotTo(BeNil(), "our reassembler did too")
			Expect([]byte(ours.Payload()[8:])).To(Equal(payload))
			s := a.ifc.Stats().IP
			Expect(s.FragOKs).To(Equal(uint64(1)))
			Expect(s.FragCreates).To(Equal(uint64(len(wantSizes))))
			Expect(a.pool.Stats().InUse).To(BeZero())
		},
		Entry("1500, 3000 bytes", 1500, 2048, 3000, []int{1480, 1480, 48}),
		Entry("1500, exactly two", 1500, 2048, 2952, []int{1480, 1480}),
		Entry("576, 1000 bytes", 576, 2048, 1000, []int{552, 456}),
		Entry("1006 (odd), 2000 bytes", 1006, 2048, 2000, []int{984, 984, 40}),
		Entry("68 (minimum), 100 bytes", 68, 2048, 100, []int{48, 48, 12}),
		Entry("9000 with 10 KiB mbufs, 20000 bytes", 9000, 10240, 20000, []int{8976, 8976, 2056}),
		// 2048-byte mbufs with 128 bytes of headroom hold 1900 bytes of
		// IP payload: 1896 after rounding down to 8.
		Entry("9000 with 2 KiB mbufs, 5000 bytes", 9000, 2048, 5000, []int{1896, 1896, 1216}),
		Entry("9000 with 2 KiB mbufs, 1950 bytes (under the MTU)", 9000, 2048, 1950, []int{1896, 62}),
	)

	It("fails DF datagrams over the MTU, counted", func() {
		a := newNode(cfgA())
		a.ifc.AddNeighbor(0, ipB, macB)
		m := a.ifc.AllocTransport()
		_, err := m.Append(1481)
		Expect(err).NotTo(HaveOccurred())
		err = a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{DontFrag: true})
		Expect(err).To(MatchError(iface.ErrMessageTooLong))
		s := a.ifc.Stats().IP
		Expect(s.FragFails).To(Equal(uint64(1)))
		Expect(s.FragFailsDF).To(Equal(uint64(1)))
		Expect(a.pool.Stats().InUse).To(BeZero())

		m = a.ifc.AllocTransport()
		m.Append(1480)
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{DontFrag: true})).To(Succeed())
		f := a.link.take()
		Expect(f).To(HaveLen(1))
		Expect(ipv4.Packet(f[0][14:]).DontFrag()).To(BeTrue())
	})

	It("counts fragmentation stopped for lack of mbufs", func() {
		a := newNode(cfgA())
		a.ifc.AddNeighbor(0, ipB, macB)
		// Leave only two mbufs: the datagram needs three fragments.
		var held []interface{ Free() }
		for len(a.pool.free) > 2 {
			held = append(held, a.pool.Get())
		}
		cli, _ := a.ifc.ListenUDP(1)
		Expect(cli.SendTo(0, make([]byte, 4000), iface.UDPAddr{IP: ipB, Port: 2})).To(MatchError(iface.ErrNoMbuf))
		s := a.ifc.Stats().IP
		Expect(s.FragFails).To(Equal(uint64(1)))
		Expect(s.FragFailsNoMbuf).To(Equal(uint64(1)))
		a.link.take()
		for _, m := range held {
			m.Free()
		}
		Expect(a.pool.Stats().InUse).To(BeZero())
	})
})

var _ = Describe("Reassembly through Input", func() {
	It("times out and sends ICMP time exceeded (code 1) when fragment 0 came", func() {
		b := newNode(cfgB())
		b.ifc.AddNeighbor(0, ipA, macA)
		payload := make([]byte, 2000)
		first := make([]byte, 20+1480)
		ipv4.Repr{Src: ipA, Dst: ipB, Protocol: ipv4.ProtoUDP, TTL: 64, Ident: 5, MoreFrags: true, PayloadLen: 1480}.Emit(ipv4.Packet(first), true)
		copy(first[20:], payload)
		b.deliver(time.Second, frame(macB, macA, first))
		Expect(b.link.out).To(BeEmpty())
		Expect(b.ifc.Poll(time.Second)).To(Equal(31 * time.Second))
		Expect(b.ifc.Poll(31 * time.Second)).To(BeNumerically(">", 31*time.Second))
		out := b.link.take()
		Expect(out).To(HaveLen(1))
		pkt := gopacket.NewPacket(out[0], layers.LayerTypeEthernet, gopacket.Default)
		ic := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		Expect(ic.TypeCode).To(Equal(layers.CreateICMPv4TypeCode(11, 1)))
		q, err := icmp.Quoted(ic.Payload)
		Expect(err).NotTo(HaveOccurred())
		Expect(q.Ident()).To(Equal(uint16(5)))
		s := b.ifc.Stats()
		Expect(s.IP.ReasmTimeout).To(Equal(uint64(1)))
		Expect(s.ICMP.OutTimeExcds).To(Equal(uint64(1)))
		Expect(b.pool.Stats().InUse).To(BeZero())
	})
	It("stays silent when fragment 0 never came", func() {
		b := newNode(cfgB())
		second := make([]byte, 20+520)
		ipv4.Repr{Src: ipA, Dst: ipB, Protocol: ipv4.ProtoUDP, TTL: 64, Ident: 5, FragOffset: 1480, PayloadLen: 520}.Emit(ipv4.Packet(second), true)
		b.deliver(0, frame(macB, macA, second))
		b.ifc.Poll(time.Minute)
		Expect(b.link.out).To(BeEmpty())
		Expect(b.ifc.Stats().IP.ReasmTimeout).To(Equal(uint64(1)))
	})
	It("drops overlapping fragments and counts them", func() {
		b := newNode(cfgB())
		mk := func(off, n int, more bool) []byte {
			d := make([]byte, 20+n)
			ipv4.Repr{Src: ipA, Dst: ipB, Protocol: ipv4.ProtoUDP, TTL: 64, Ident: 9, FragOffset: off, MoreFrags: more, PayloadLen: n}.Emit(ipv4.Packet(d), true)
			return frame(macB, macA, d)
		}
		b.deliver(0, mk(0, 800, true))
		b.deliver(0, mk(400, 800, false))
		s := b.ifc.Stats().IP
		Expect(s.ReasmOverlaps).To(Equal(uint64(1)))
		Expect(s.ReasmFails).To(Equal(uint64(1)))
		Expect(s.ReasmReqds).To(Equal(uint64(2)))
		Expect(b.pool.Stats().InUse).To(BeZero())
	})
})

var _ = Describe("ARP through the interface", func() {
	It("announces on Start and drops what waited when resolution fails", func() {
		a := newNode(cfgA())
		a.ifc.Start(0)
		Expect(a.ifc.Poll(0)).To(Equal(iface.Never))
		f := a.link.take()
		Expect(f).To(HaveLen(1))
		pkt := gopacket.NewPacket(f[0], layers.LayerTypeEthernet, gopacket.Default)
		ar := pkt.Layer(layers.LayerTypeARP).(*layers.ARP)
		Expect(ar.SourceProtAddress).To(Equal(ipA[:]))
		Expect(ar.DstProtAddress).To(Equal(ipA[:]))
		Expect(len(f[0])).To(Equal(ether.MinFrameLen))

		Expect(a.ifc.SendEcho(0, ipB, 1, 1, nil)).To(Succeed())
		Expect(a.ifc.SendEcho(0, ipB, 1, 2, nil)).To(Succeed())
		now := time.Duration(0)
		for range 5 {
			now = a.ifc.Poll(now)
			if now == iface.Never {
				break
			}
		}
		Expect(a.link.take()).To(HaveLen(3), "three requests")
		s := a.ifc.Stats()
		Expect(s.ARP.ResolveTimeouts).To(Equal(uint64(1)))
		Expect(s.ARP.PendingDropTimeout).To(Equal(uint64(2)))
		Expect(s.IP.OutDiscards).To(Equal(uint64(2)))
		Expect(a.pool.Stats().InUse).To(BeZero())
	})
	It("counts ARP packets it cannot send for lack of mbufs", func() {
		a := newNode(cfgA())
		a.link.dead = true
		a.ifc.Announce(0)
		Expect(a.ifc.Stats().Tx.ARPNoMbuf).To(Equal(uint64(1)))
	})
})
