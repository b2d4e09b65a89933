package iface_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/udp"
)

func udpDatagram(sport, dport uint16, payload []byte) []byte {
	b := make([]byte, 8+len(payload))
	copy(b[8:], payload)
	udp.Repr{SrcPort: sport, DstPort: dport, PayloadLen: len(payload)}.Emit(udp.Packet(b), ipA, ipB, true)
	return b
}

func echoRequest() []byte {
	b := make([]byte, 16)
	icmp.Repr{Type: icmp.TypeEchoRequest, Ident: 1, Seq: 1, Data: []byte("12345678")}.Emit(icmp.Packet(b))
	return b
}

// mutateIP rebuilds a datagram after mutating its header and fixes the
// header checksum unless keepSum.
func mutIP(mut func(p ipv4.Packet), fix bool) []byte {
	d := datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 7, []byte("data")))
	p := ipv4.Packet(d)
	mut(p)
	if fix {
		p.FillChecksum()
	}
	return frame(macB, macA, d)
}

var _ = Describe("Input of malformed and unwanted frames", func() {
	var b *node
	BeforeEach(func() {
		b = newNode(cfgB())
		b.ifc.AddNeighbor(0, ipA, macA)
		_, err := b.ifc.ListenUDP(7)
		Expect(err).NotTo(HaveOccurred())
	})
	AfterEach(func() {
		b.ifc.Close()
		b.link.take()
		Expect(b.pool.Stats().InUse).To(BeZero(), "every mbuf freed")
	})

	DescribeTable("counts each class by layer and reason, never panics",
		func(f []byte, rxFlags hw.OffloadFlags, counter func(s iface.Stats) uint64) {
			b.rxFlags = rxFlags
			before := counter(b.ifc.Stats())
			Expect(func() { b.deliver(0, f) }).NotTo(Panic())
			Expect(counter(b.ifc.Stats()) - before).To(Equal(uint64(1)))
		},
		Entry("empty frame", []byte{}, hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxTruncated }),
		Entry("13 bytes", make([]byte, 13), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxTruncated }),
		Entry("802.3 length", append(append(append([]byte{}, macB[:]...), macA[:]...), 0, 46), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxLengthField }),
		Entry("VLAN tagged", func() []byte {
			f := make([]byte, 60)
			ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeIPv4, Tagged: true, VLANTCI: 5}.Emit(ether.Frame(f))
			return f
		}(), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxVLAN }),
		Entry("stacked VLAN", func() []byte {
			f := make([]byte, 60)
			ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeVLAN, Tagged: true}.Emit(ether.Frame(f))
			return f
		}(), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxStackedVLAN }),
		Entry("other host", frame(macA, macA, datagram(ipA, ipB, 17, nil)), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxOtherHost }),
		Entry("multicast MAC", frame(ether.Addr{1, 0, 0x5e, 0, 0, 1}, macA, datagram(ipA, ipB, 17, nil)), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxMulticast }),
		Entry("group source MAC", frame(macB, ether.BroadcastAddr(), datagram(ipA, ipB, 17, nil)), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxBadSource }),
		Entry("IPv6", func() []byte {
			f := make([]byte, 60)
			ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeIPv6}.Emit(ether.Frame(f))
			return f
		}(), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.Eth.RxUnknownEtherType }),

		Entry("ARP truncated", func() []byte {
			f := make([]byte, 14+20)
			ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeARP}.Emit(ether.Frame(f))
			return f
		}(), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.ARP.RxTruncated }),
		Entry("ARP for IPv6", func() []byte {
			f := make([]byte, 60)
			ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeARP}.Emit(ether.Frame(f))
			arp.Repr{Op: arp.OpRequest, SenderHW: macA}.Emit(arp.Packet(f[14:]))
			f[16] = 0x86
			return f
		}(), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.ARP.RxBadProtocolType }),

		Entry("IP truncated", frame(macB, macA, []byte{0x45, 0}), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.RxTruncated }),
		Entry("IP version", mutIP(func(p ipv4.Packet) { p[0] = 0x65 }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.RxBadVersion }),
		Entry("IP IHL", mutIP(func(p ipv4.Packet) { p[0] = 0x43 }, false), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.RxBadHeaderLen }),
		Entry("IP total length", mutIP(func(p ipv4.Packet) { p.SetTotalLen(10) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.RxBadTotalLen }),
		Entry("IP checksum", mutIP(func(p ipv4.Packet) { p[8] = 1 }, false), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.RxBadChecksum }),
		Entry("IP checksum bad per NIC", mutIP(func(p ipv4.Packet) {}, true), hw.RxIPChecksumBad, func(s iface.Stats) uint64 { return s.IP.RxBadChecksum }),
		Entry("IP fragment length", mutIP(func(p ipv4.Packet) { p.SetFrag(false, true, 0) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.RxBadFragLength }),
		Entry("IP not for us", mutIP(func(p ipv4.Packet) { p.SetDst([4]byte{10, 0, 0, 9}) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.InAddrErrors }),
		Entry("IP multicast destination", mutIP(func(p ipv4.Packet) { p.SetDst([4]byte{224, 0, 0, 1}) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.InAddrErrors }),
		Entry("IP broadcast source", mutIP(func(p ipv4.Packet) { p.SetSrc([4]byte{10, 0, 0, 255}) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.InAddrErrors }),
		Entry("IP loopback source", mutIP(func(p ipv4.Packet) { p.SetSrc([4]byte{127, 0, 0, 1}) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.InAddrErrors }),
		Entry("IP unknown protocol", mutIP(func(p ipv4.Packet) { p.SetProtocol(132) }, true), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.IP.InUnknownProtos }),

		Entry("ICMP truncated", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoICMP, []byte{8, 0})), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.ICMP.InTruncated }),
		Entry("ICMP checksum", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoICMP, func() []byte { e := echoRequest(); e[9]++; return e }())), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.ICMP.InCsumErrors }),
		Entry("ICMP error with a bad quote", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoICMP, func() []byte {
			e := make([]byte, 8+10)
			icmp.Repr{Type: icmp.TypeDestUnreach, Data: make([]byte, 10)}.Emit(icmp.Packet(e))
			return e
		}())), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.ICMP.InBadQuote }),

		Entry("UDP truncated", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, []byte{0, 1, 0})), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.UDP.InTruncated }),
		Entry("UDP length", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, func() []byte { u := udpDatagram(1, 7, nil); u[5] = 4; return u }())), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.UDP.InBadLength }),
		Entry("UDP checksum", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, func() []byte { u := udpDatagram(1, 7, []byte("x")); u[8]++; return u }())), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.UDP.InCsumErrors }),
		Entry("UDP checksum bad per NIC", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 7, nil))), hwL4Bad, func(s iface.Stats) uint64 { return s.UDP.InCsumErrors }),
		Entry("UDP closed port", frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 8, nil))), hw.OffloadFlags(0), func(s iface.Stats) uint64 { return s.UDP.NoPorts }),
	)

	It("drops chained mbufs", func() {
		m := b.pool.Get()
		m.SetData(frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 7, nil))))
		m2 := b.pool.Get()
		m.Next, m.NbSegs = m2, 2
		b.ifc.Input(0, m)
		Expect(b.ifc.Stats().Eth.RxChained).To(Equal(uint64(1)))
		b.ifc.Input(0, nil)
	})

	It("answers an unknown protocol with protocol unreachable", func() {
		b.deliver(0, mutIP(func(p ipv4.Packet) { p.SetProtocol(132) }, true))
		out := b.link.take()
		Expect(out).To(HaveLen(1))
		m, err := icmp.Parse(icmp.Packet(out[0][34:]), true)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Type).To(Equal(icmp.TypeDestUnreach))
		Expect(m.Code).To(Equal(icmp.CodeProtoUnreach))
	})

	It("never answers an ICMP error with an error", func() {
		// An ICMP error carrying an unknown protocol in the datagram
		// header would, as a datagram, trigger protocol unreachable:
		// a datagram whose protocol is ICMP and whose type is an
		// error is never answered.
		quote := datagram(ipB, ipA, ipv4.ProtoUDP, udpDatagram(7, 1, nil))
		e := make([]byte, 8+len(quote))
		icmp.Repr{Type: icmp.TypeDestUnreach, Code: 3, Data: quote}.Emit(icmp.Packet(e))
		b.deliver(0, frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoICMP, e)))
		Expect(b.link.out).To(BeEmpty())
		Expect(b.ifc.Stats().ICMP.InDestUnreachs).To(Equal(uint64(1)))
		// SendICMPError on it is suppressed and counted.
		d := datagram(ipA, ipB, ipv4.ProtoICMP, e)
		b.ifc.SendICMPError(0, ipv4.Packet(d), false, 3, 3, 0)
		Expect(b.link.out).To(BeEmpty())
		Expect(b.ifc.Stats().ICMP.OutSuppressedAboutError).To(Equal(uint64(1)))
	})

	It("rate-limits ICMP errors with a token bucket on now", func() {
		c := cfgB()
		c.ICMPRateLimit = icmp.LimiterConfig{Rate: 2, Burst: 2}
		b.ifc.Close()
		b = newNode(c)
		b.ifc.AddNeighbor(0, ipA, macA)
		f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 8, nil)))
		for range 5 {
			b.deliver(0, f)
		}
		Expect(b.link.take()).To(HaveLen(2))
		Expect(b.ifc.Stats().ICMP.OutRateLimited).To(Equal(uint64(3)))
		b.deliver(500*time.Millisecond, f)
		Expect(b.link.take()).To(HaveLen(1))
	})
})
