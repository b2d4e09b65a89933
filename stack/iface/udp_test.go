package iface_test

import (
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/udp"
)

var _ = Describe("UDP sockets end to end", func() {
	var (
		a, b *node
		w    *wire
	)
	BeforeEach(func() {
		a, b = newNode(cfgA()), newNode(cfgB())
		w = &wire{a: a, b: b}
	})
	AfterEach(func() {
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
		Expect(b.pool.Stats().InUse).To(BeZero())
	})

	It("sends to and receives from, both ways", func() {
		srv, err := b.ifc.ListenUDP(7)
		Expect(err).NotTo(HaveOccurred())
		cli, err := a.ifc.ListenUDP(0)
		Expect(err).NotTo(HaveOccurred())
		Expect(cli.LocalAddr().Port).To(Equal(uint16(49152)))
		Expect(cli.SendTo(0, []byte("hello"), iface.UDPAddr{IP: ipB, Port: 7})).To(Succeed())
		w.pump(0)
		buf := make([]byte, 100)
		n, from, ok := srv.RecvFrom(buf)
		Expect(ok).To(BeTrue())
		Expect(string(buf[:n])).To(Equal("hello"))
		Expect(from).To(Equal(iface.UDPAddr{IP: ipA, Port: 49152}))
		Expect(from.String()).To(Equal("10.0.0.1:49152"))
		Expect(srv.SendTo(0, []byte("world"), from)).To(Succeed())
		w.pump(0)
		data, from2, ok := cli.Peek()
		Expect(ok).To(BeTrue())
		Expect(string(data)).To(Equal("world"))
		Expect(from2.Port).To(Equal(uint16(7)))
		cli.Discard()
		_, _, ok = cli.RecvFrom(buf)
		Expect(ok).To(BeFalse())
		Expect(b.ifc.Stats().UDP.InDatagrams).To(Equal(uint64(1)))
		Expect(a.ifc.Stats().UDP.OutDatagrams).To(Equal(uint64(1)))
		Expect(srv.Stats().Delivered).To(Equal(uint64(1)))

		// The datagram on the wire is valid for gopacket, checksum included.
		last := w.frames[len(w.frames)-1]
		pkt := gopacket.NewPacket(last, layers.LayerTypeEthernet, gopacket.Default)
		u := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		Expect(u.SrcPort).To(Equal(layers.UDPPort(7)))
		Expect(udp.Packet(last[34:]).VerifyChecksum(ipB, ipA)).To(BeTrue())
		Expect(udp.Packet(last[34:]).Checksum()).NotTo(BeZero())
	})

	It("bounds the receive queue and counts drops", func() {
		c := cfgB()
		c.UDPRecvQueue = 2
		b = newNode(c)
		w = &wire{a: a, b: b}
		srv, _ := b.ifc.ListenUDP(9)
		cli, _ := a.ifc.ListenUDP(0)
		for range 5 {
			Expect(cli.SendTo(0, []byte("x"), iface.UDPAddr{IP: ipB, Port: 9})).To(Succeed())
		}
		w.pump(0)
		Expect(srv.Pending()).To(Equal(2))
		Expect(srv.Stats().Dropped).To(Equal(uint64(3)))
		s := b.ifc.Stats().UDP
		Expect(s.RcvbufErrors).To(Equal(uint64(3)))
		Expect(s.InErrors).To(Equal(uint64(3)))
		buf := make([]byte, 0)
		n, _, ok := srv.RecvFrom(buf)
		Expect(ok).To(BeTrue())
		Expect(n).To(BeZero())
		Expect(srv.Stats().Truncated).To(Equal(uint64(1)))
	})

	It("answers a closed port with ICMP port unreachable, delivered back to the sender", func() {
		cli, _ := a.ifc.ListenUDP(5000)
		Expect(cli.SendTo(0, []byte("anyone?"), iface.UDPAddr{IP: ipB, Port: 9999})).To(Succeed())
		w.pump(0)
		sb := b.ifc.Stats()
		Expect(sb.UDP.NoPorts).To(Equal(uint64(1)))
		Expect(sb.ICMP.OutDestUnreachs).To(Equal(uint64(1)))
		last := w.frames[len(w.frames)-1]
		pkt := gopacket.NewPacket(last, layers.LayerTypeEthernet, gopacket.Default)
		ic := pkt.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4)
		Expect(ic.TypeCode).To(Equal(layers.CreateICMPv4TypeCode(3, 3)))
		Expect(len(ic.Payload)).To(Equal(28), "IP header + 8 bytes")
		sa := a.ifc.Stats()
		Expect(sa.ICMP.InDestUnreachs).To(Equal(uint64(1)))
		Expect(sa.UDP.InICMPErrors).To(Equal(uint64(1)))
		Expect(cli.Stats().ICMPErrors).To(Equal(uint64(1)))
	})

	It("does not answer a broadcast to a closed port", func() {
		cli, _ := a.ifc.ListenUDP(5000)
		Expect(cli.SendTo(0, []byte("?"), iface.UDPAddr{IP: [4]byte{10, 0, 0, 255}, Port: 9999})).To(Succeed())
		Expect(cli.SendTo(0, []byte("?"), iface.UDPAddr{IP: ipv4.Broadcast(), Port: 9999})).To(Succeed())
		w.pump(0)
		Expect(w.frames).To(HaveLen(2), "no ARP, no ICMP")
		Expect(ether.Frame(w.frames[0]).Dst().IsBroadcast()).To(BeTrue())
		Expect(b.ifc.Stats().UDP.IgnoredMulti).To(Equal(uint64(2)))
	})

	It("delivers broadcasts to a bound port", func() {
		srv, _ := b.ifc.ListenUDP(67)
		cli, _ := a.ifc.ListenUDP(68)
		Expect(cli.SendTo(0, []byte("discover"), iface.UDPAddr{IP: ipv4.Broadcast(), Port: 67})).To(Succeed())
		w.pump(0)
		Expect(srv.Pending()).To(Equal(1))
	})

	It("sends and receives datagrams larger than the MTU", func() {
		srv, _ := b.ifc.ListenUDP(7)
		cli, _ := a.ifc.ListenUDP(0)
		big := make([]byte, 9000)
		for i := range big {
			big[i] = byte(i % 253)
		}
		Expect(cli.SendTo(0, big, iface.UDPAddr{IP: ipB, Port: 7})).To(Succeed())
		w.pump(0)
		buf := make([]byte, 10000)
		n, _, ok := srv.RecvFrom(buf)
		Expect(ok).To(BeTrue())
		Expect(buf[:n]).To(Equal(big))
		Expect(b.ifc.Stats().UDP.InCopied).To(Equal(uint64(1)))
		Expect(a.ifc.Stats().IP.FragCreates).To(Equal(uint64(7)))
	})

	It("refuses what cannot be sent, counted", func() {
		cli, _ := a.ifc.ListenUDP(0)
		Expect(cli.SendTo(0, make([]byte, 70000), iface.UDPAddr{IP: ipB, Port: 7})).To(MatchError(iface.ErrMessageTooLong))
		Expect(cli.SendTo(0, nil, iface.UDPAddr{IP: [4]byte{1, 2, 3, 4}, Port: 7})).To(MatchError(iface.ErrNoRoute))
		a.link.dead = true
		Expect(cli.SendTo(0, nil, iface.UDPAddr{IP: ipB, Port: 7})).To(MatchError(iface.ErrNoMbuf))
		a.link.dead = false
		Expect(cli.Stats().SendErrors).To(Equal(uint64(3)))
		Expect(a.ifc.Stats().UDP.SndbufErrors).To(Equal(uint64(3)))
		Expect(a.ifc.Stats().Tx.NoMbuf).To(Equal(uint64(1)))
		cli.Close()
		Expect(cli.SendTo(0, nil, iface.UDPAddr{IP: ipB, Port: 7})).To(MatchError(iface.ErrClosed))
	})

	It("binds ports exclusively and hands out ephemeral ones", func() {
		c := cfgA()
		c.EphemeralLow, c.EphemeralHigh = 40000, 40001
		a = newNode(c)
		w = &wire{a: a, b: b}
		s1, err := a.ifc.ListenUDP(40000)
		Expect(err).NotTo(HaveOccurred())
		_, err = a.ifc.ListenUDP(40000)
		Expect(err).To(MatchError(iface.ErrPortInUse))
		s2, err := a.ifc.ListenUDP(0)
		Expect(err).NotTo(HaveOccurred())
		Expect(s2.LocalAddr().Port).To(Equal(uint16(40001)))
		_, err = a.ifc.ListenUDP(0)
		Expect(err).To(MatchError(iface.ErrNoPorts))
		s1.Close()
		s3, err := a.ifc.ListenUDP(0)
		Expect(err).NotTo(HaveOccurred())
		Expect(s3.LocalAddr().Port).To(Equal(uint16(40000)))
	})

	It("uses the NIC's checksum verdicts", func() {
		srv, _ := b.ifc.ListenUDP(7)
		ud := make([]byte, 8+3)
		copy(ud[8:], "abc")
		udp.Repr{SrcPort: 1, DstPort: 7, PayloadLen: 3}.Emit(udp.Packet(ud), ipA, ipB, true)
		ud[10] ^= 0xff // corrupt the payload: software would catch it
		f := frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, ud))
		b.rxFlags = hwRxGood
		b.deliver(0, f)
		Expect(srv.Pending()).To(Equal(1), "hardware said good")
		b.rxFlags = hwL4Bad
		b.deliver(0, f)
		b.rxFlags = 0
		b.deliver(0, f)
		s := b.ifc.Stats().UDP
		Expect(s.InCsumErrors).To(Equal(uint64(2)))
		Expect(s.InCsumOffload).To(Equal(uint64(1)))
	})

	It("leaves the checksum to the NIC when the link offloads it, the pseudo-header sum in its field", func() {
		a.link.off = hwAllOffloads
		a = newNodeLike(a, cfgA())
		w = &wire{a: a, b: b}
		srv, _ := b.ifc.ListenUDP(7)
		cli, _ := a.ifc.ListenUDP(0)
		a.ifc.AddNeighbor(0, ipB, macB) // the datagram is the first frame out, not an ARP request
		Expect(cli.SendTo(0, []byte("offloaded"), iface.UDPAddr{IP: ipB, Port: 7})).To(Succeed())
		Expect(a.link.out).To(HaveLen(1))
		m := a.link.out[0]
		Expect(m.Flags & hw.TxUDPChecksum).NotTo(BeZero())
		d := udp.Packet(m.Data()[ether.HeaderLen+ipv4.MinHeaderLen:])
		Expect(d.Checksum()).To(Equal(udp.PseudoHeaderChecksum(ipA, ipB, int(d.Length()))))
		w.pump(0) // the fake NIC finishes the sum; b verifies it in software
		Expect(srv.Pending()).To(Equal(1))
		Expect(b.ifc.Stats().UDP.InCsumErrors).To(BeZero())
	})
})

var _ = Describe("SendIPv4 (copying)", func() {
	It("copies, checksums and fragments as asked", func() {
		a, b := newNode(cfgA()), newNode(cfgB())
		w := &wire{a: a, b: b}
		srv, _ := b.ifc.ListenUDP(7)
		for _, size := range []int{10, 3000} {
			u := make([]byte, 8+size)
			udp.Repr{SrcPort: 1, DstPort: 7, PayloadLen: size}.Emit(udp.Packet(u), ipA, ipB, false)
			u[6], u[7] = 0, 0
			keep := append([]byte(nil), u...)
			Expect(a.ifc.SendIPv4(0, ipB, ipv4.ProtoUDP, u, iface.OutputOptions{Checksum: iface.ChecksumUDP})).To(Succeed())
			Expect(u).To(Equal(keep), "caller's bytes untouched")
			w.pump(0)
			Expect(srv.Pending()).To(Equal(1))
			srv.Discard()
		}
		Expect(b.ifc.Stats().UDP.InCsumErrors).To(BeZero())
		Expect(a.ifc.SendIPv4(0, ipB, ipv4.ProtoUDP, make([]byte, 70000), iface.OutputOptions{})).To(MatchError(iface.ErrMessageTooLong))
		a.ifc.Close()
		b.ifc.Close()
		Expect(a.pool.Stats().InUse + b.pool.Stats().InUse).To(BeZero())
	})
})
