package iface_test

import (
	"encoding/binary"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// fakeTCP records segments and ICMP errors.
type fakeTCP struct {
	segs   []iface.Segment
	data   [][]byte
	errs   []iface.ICMPError
	keep   bool
	kept   []*hw.Mbuf
	quoted [][]byte
}

func (t *fakeTCP) HandleSegment(now time.Duration, s iface.Segment) {
	t.segs = append(t.segs, s)
	t.data = append(t.data, append([]byte(nil), s.Payload...))
	if t.keep && s.Mbuf != nil {
		s.Mbuf.RefInc()
		t.kept = append(t.kept, s.Mbuf)
	}
}

func (t *fakeTCP) HandleICMPError(now time.Duration, e iface.ICMPError) {
	t.errs = append(t.errs, e)
	t.quoted = append(t.quoted, append([]byte(nil), e.Quoted...))
}

// tcpSegment writes a 20-byte TCP header plus data into an mbuf from
// AllocTransport, checksum zero, as the TCP engine would.
func tcpSegment(ifc *iface.Interface, sport, dport uint16, data []byte) *hw.Mbuf {
	m := ifc.AllocTransport()
	Expect(m).NotTo(BeNil())
	Expect(m.Headroom()).To(BeNumerically(">=", iface.HeaderRoom))
	seg, err := m.Append(20 + len(data))
	Expect(err).NotTo(HaveOccurred())
	binary.BigEndian.PutUint16(seg[0:], sport)
	binary.BigEndian.PutUint16(seg[2:], dport)
	binary.BigEndian.PutUint32(seg[4:], 1000)
	seg[12] = 5 << 4
	seg[13] = 0x18 // PSH|ACK
	binary.BigEndian.PutUint16(seg[14:], 65535)
	copy(seg[20:], data)
	return m
}

var _ = Describe("The TCP hook", func() {
	var (
		a, b *node
		w    *wire
		tcp  *fakeTCP
	)
	BeforeEach(func() {
		a, b = newNode(cfgA()), newNode(cfgB())
		w = &wire{a: a, b: b}
		tcp = &fakeTCP{}
		Expect(b.ifc.RegisterTransport(ipv4.ProtoTCP, tcp)).To(Succeed())
	})
	AfterEach(func() {
		for _, m := range tcp.kept {
			m.Free()
		}
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
		Expect(b.pool.Stats().InUse).To(BeZero())
	})

	check := func() {
		Expect(tcp.segs).To(HaveLen(1))
		s := tcp.segs[0]
		Expect(s.Src).To(Equal(ipA))
		Expect(s.Dst).To(Equal(ipB))
		Expect(s.Protocol).To(Equal(ipv4.ProtoTCP))
		Expect(s.Broadcast).To(BeFalse())
		Expect(tcp.data[0][20:]).To(Equal([]byte("GET / HTTP/1.1\r\n")))
		sum := checksum.PseudoHeaderV4(s.Src, s.Dst, 6, len(tcp.data[0]))
		Expect(checksum.Finish(checksum.Add(sum, tcp.data[0]))).To(BeZero(), "checksum valid")
		last := w.frames[len(w.frames)-1]
		pkt := gopacket.NewPacket(last, layers.LayerTypeEthernet, gopacket.Default)
		Expect(pkt.ErrorLayer()).To(BeNil())
		tl := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		Expect(tl.PSH && tl.ACK).To(BeTrue())
		Expect(tl.DstPort).To(Equal(layers.TCPPort(80)))
		ip := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		Expect(ip.Flags & layers.IPv4DontFragment).NotTo(BeZero())
	}

	It("sends zero-copy segments with a software checksum and delivers them", func() {
		m := tcpSegment(a.ifc, 40000, 80, []byte("GET / HTTP/1.1\r\n"))
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP, DontFrag: true})).To(Succeed())
		w.pump(0)
		check()
		Expect(b.ifc.Stats().TCP.InSegs).To(Equal(uint64(1)))
		Expect(a.ifc.Stats().TCP.OutSegs).To(Equal(uint64(1)))
	})

	It("leaves the checksum to the NIC when the link offloads it", func() {
		a.link.off = hwAllOffloads
		a = newNodeLike(a, cfgA())
		a.rxFlags = 0
		w = &wire{a: a, b: b}
		m := tcpSegment(a.ifc, 40000, 80, []byte("GET / HTTP/1.1\r\n"))
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP, DontFrag: true})).To(Succeed())
		Expect(m.Flags & (hw.TxTCPChecksum | hw.TxIPChecksum | hw.TxIPv4)).To(Equal(hw.TxTCPChecksum | hw.TxIPChecksum | hw.TxIPv4))
		Expect(m.L2Len).To(Equal(uint16(14)))
		Expect(m.L3Len).To(Equal(uint16(20)))
		w.pump(0)
		check()
		Expect(a.ifc.Stats().TCP.OutCsumOffload).To(Equal(uint64(1)))
	})

	It("drops segments with a bad checksum before the handler", func() {
		m := tcpSegment(a.ifc, 1, 80, []byte("x"))
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{})).To(Succeed()) // checksum left zero
		w.pump(0)
		Expect(tcp.segs).To(BeEmpty())
		Expect(b.ifc.Stats().TCP.InCsumErrors).To(Equal(uint64(1)))
	})

	It("lets the handler keep the mbuf (zero-copy receive)", func() {
		tcp.keep = true
		m := tcpSegment(a.ifc, 1, 80, []byte("keep me"))
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP})).To(Succeed())
		w.pump(0)
		Expect(tcp.kept).To(HaveLen(1))
		Expect(b.pool.Stats().InUse).To(Equal(1), "still held by the handler")
		Expect(string(tcp.segs[0].Payload[20:])).To(Equal("keep me"))
	})

	It("hands ICMP errors quoting TCP to the handler (fragmentation needed, RFC 1191)", func() {
		b.ifc.AddNeighbor(0, ipA, macA)
		// B sends a segment; A answers with fragmentation needed, as a
		// router would.
		m := tcpSegment(b.ifc, 80, 40000, []byte("big"))
		Expect(b.ifc.OutputIPv4(0, m, ipA, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP, DontFrag: true})).To(Succeed())
		sent := b.link.take()[0]
		a.ifc.AddNeighbor(0, ipB, macB)
		a.ifc.SendICMPError(0, ipv4.Packet(sent[14:]), false, uint8(icmp.TypeDestUnreach), icmp.CodeFragNeeded, 1400)
		w.pump(0)
		Expect(tcp.errs).To(HaveLen(1))
		e := tcp.errs[0]
		Expect(e.From).To(Equal(ipA))
		Expect(e.Type).To(Equal(uint8(3)))
		Expect(e.Code).To(Equal(uint8(4)))
		Expect(e.MTU).To(Equal(uint16(1400)))
		q := ipv4.Packet(tcp.quoted[0])
		Expect(q.Dst()).To(Equal(ipA))
		Expect(binary.BigEndian.Uint16(q[20:])).To(Equal(uint16(80)), "source port quoted")
		Expect(b.ifc.Stats().TCP.InICMPErrors).To(Equal(uint64(1)))
	})

	It("delivers reassembled TCP datagrams without an mbuf", func() {
		b.ifc.AddNeighbor(0, ipA, macA)
		a.ifc.AddNeighbor(0, ipB, macB)
		data := make([]byte, 3000)
		m := tcpSegment(a.ifc, 1, 80, nil)
		// Grow the segment past the MTU: the test mbufs hold 1920 bytes,
		// so use the scratch path through a big pool.
		m.Free()
		big := newNodeRoom(cfgA(), 8192)
		big.ifc.AddNeighbor(0, ipB, macB)
		m = tcpSegment(big.ifc, 1, 80, data)
		Expect(big.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP})).To(Succeed())
		for _, f := range big.link.take() {
			b.deliver(0, f)
		}
		Expect(tcp.segs).To(HaveLen(1))
		Expect(tcp.segs[0].Mbuf).To(BeNil())
		Expect(tcp.data[0]).To(HaveLen(3020))
		Expect(big.pool.Stats().InUse).To(BeZero())
	})

	It("guards registration", func() {
		Expect(b.ifc.RegisterTransport(ipv4.ProtoTCP, &fakeTCP{})).To(MatchError(iface.ErrProtocolTaken))
		Expect(b.ifc.RegisterTransport(ipv4.ProtoUDP, &fakeTCP{})).To(MatchError(iface.ErrProtocolTaken))
		Expect(b.ifc.RegisterTransport(ipv4.ProtoICMP, &fakeTCP{})).To(MatchError(iface.ErrProtocolTaken))
		Expect(b.ifc.RegisterTransport(ipv4.ProtoTCP, nil)).To(Succeed())
		Expect(b.ifc.RegisterTransport(ipv4.ProtoTCP, tcp)).To(Succeed())
	})

	It("refuses mbufs it cannot send, counted", func() {
		m := a.pool.Get()
		m.DataOff = 10
		m.Append(20)
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{})).To(MatchError(iface.ErrNoHeadroom))
		m = a.ifc.AllocTransport()
		m.Append(20)
		m.Next = a.pool.Get()
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{})).To(MatchError(iface.ErrChained))
		s := a.ifc.Stats()
		Expect(s.Tx.NoHeadroom).To(Equal(uint64(1)))
		Expect(s.Tx.Chained).To(Equal(uint64(1)))
		Expect(s.IP.OutDiscards).To(Equal(uint64(2)))
		a.link.dead = true
		Expect(a.ifc.AllocTransport()).To(BeNil())
		a.link.dead = false
	})

	It("charges its work to a meter", func() {
		var meter hw.CountingMeter
		b.ifc.SetMeter(&meter)
		m := tcpSegment(a.ifc, 1, 80, []byte("x"))
		Expect(a.ifc.OutputIPv4(0, m, ipB, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP})).To(Succeed())
		w.pump(0)
		Expect(meter.Counts[iface.CostFrameRx]).To(BeNumerically(">=", 2))
		Expect(meter.Counts[iface.CostIPRx]).To(Equal(int64(1)))
		Expect(meter.Counts[hw.CostChecksumByte]).To(BeNumerically(">", 20))
	})
})

var _ = Describe("SegmentSender, the output of a transport engine (stack/tcp's Output)", func() {
	var (
		a, b     *node
		w        *wire
		got      [][]byte
		send     *iface.SegmentSender
		segBytes func(data string) []byte
	)
	BeforeEach(func() {
		a, b = newNode(cfgA()), newNode(cfgB())
		w = &wire{a: a, b: b}
		got = nil
		Expect(b.ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(now time.Duration, s iface.Segment) {
			got = append(got, append([]byte(nil), s.Payload...))
		}))).To(Succeed())
		// Neighbours known: the only mbufs taken are the segments'.
		a.ifc.AddNeighbor(0, ipB, macB)
		b.ifc.AddNeighbor(0, ipA, macA)
		send = iface.NewSegmentSender(a.ifc, ipv4.ProtoTCP, iface.OutputOptions{DontFrag: true, Checksum: iface.ChecksumTCP})
		segBytes = func(data string) []byte {
			seg := make([]byte, 20+len(data))
			seg[12] = 5 << 4
			copy(seg[20:], data)
			return seg
		}
	})
	AfterEach(func() {
		w.pump(time.Hour)
		a.ifc.Close()
		b.ifc.Close()
		Expect(a.pool.Stats().InUse+b.pool.Stats().InUse).To(BeZero(), "no mbuf is left lent or leaked")
	})

	It("gives the IPv4 header length and pseudo-header sum (RFC 9293 section 3.1)", func() {
		Expect(send.HeaderLen()).To(Equal(ipv4.MinHeaderLen))
		Expect(send.PseudoHeaderSum(ipA, ipB, 1234)).To(Equal(checksum.PseudoHeaderV4(ipA, ipB, 6, 1234)))
		udpSend := iface.NewSegmentSender(a.ifc, ipv4.ProtoUDP, iface.OutputOptions{})
		Expect(udpSend.PseudoHeaderSum(ipA, ipB, 8)).To(Equal(checksum.PseudoHeaderV4(ipA, ipB, 17, 8)))
	})

	It("carries copied segments (SendSegment), with HandlerFunc on the other side", func() {
		Expect(send.SendSegment(0, ipA, ipB, segBytes("abcd"))).To(Succeed())
		w.pump(0)
		Expect(got).To(HaveLen(1))
		Expect(string(got[0][20:])).To(Equal("abcd"))
		Expect(send.SendSegment(0, ipB, ipA, segBytes("abcd"))).To(MatchError(iface.ErrBadAddress))
	})

	It("sends a segment built in a lent buffer in place, from the mbuf that lent it", func() {
		buf, token := send.Lend(60 + 4)
		Expect(token).NotTo(BeZero())
		Expect(buf).To(HaveLen(64))
		Expect(cap(buf)).To(Equal(64), "the loan cannot be grown past what was lent")
		Expect(a.pool.Stats().Gets).To(BeEquivalentTo(1))
		copy(buf, segBytes("wxyz"))
		Expect(send.SendLent(0, ipA, ipB, token, 24)).To(Succeed())
		Expect(a.pool.Stats().Gets).To(BeEquivalentTo(1), "no second mbuf: no copy")
		Expect(a.link.out).To(HaveLen(1))
		m := a.link.out[0]
		Expect(&m.Buf[m.DataOff+iface.HeaderRoom]).To(BeIdenticalTo(&buf[0]), "the frame's TCP header is where the loan was")
		w.pump(0)
		Expect(got).To(HaveLen(1))
		Expect(string(got[0][20:])).To(Equal("wxyz"))
	})

	It("refuses to send a loan twice: the second SendLent is an error, counted, and sends nothing", func() {
		buf, token := send.Lend(64)
		copy(buf, segBytes("once"))
		Expect(send.SendLent(0, ipA, ipB, token, 24)).To(Succeed())
		before := a.ifc.Stats().IP
		Expect(send.SendLent(0, ipA, ipB, token, 24)).To(MatchError(iface.ErrLoanEnded))
		after := a.ifc.Stats().IP
		Expect(after.OutRequests - before.OutRequests).To(BeEquivalentTo(1))
		Expect(after.OutDiscards - before.OutDiscards).To(BeEquivalentTo(1))
		w.pump(0)
		Expect(got).To(HaveLen(1))
		Expect(send.SendLent(0, ipA, ipB, 99, 24)).To(MatchError(iface.ErrLoanEnded), "a token never lent")
	})

	It("takes an unsent loan back at the next Lend: its token is refused, its mbuf lent again, none leaked", func() {
		first, t1 := send.Lend(64)
		copy(first, segBytes("lost"))
		second, t2 := send.Lend(64)
		Expect(t2).NotTo(Equal(t1))
		Expect(a.pool.Stats().Gets).To(BeEquivalentTo(1), "the abandoned loan's mbuf is the new loan's")
		copy(second, segBytes("kept"))
		Expect(send.SendLent(0, ipA, ipB, t1, 24)).To(MatchError(iface.ErrLoanEnded))
		Expect(send.SendLent(0, ipA, ipB, t2, 24)).To(Succeed())
		w.pump(0)
		Expect(got).To(HaveLen(1))
		Expect(string(got[0][20:])).To(Equal("kept"))
	})

	It("ends a loan sent with a length beyond it, or from an address not ours, without sending", func() {
		_, token := send.Lend(64)
		Expect(send.SendLent(0, ipA, ipB, token, 65)).To(MatchError(iface.ErrLoanEnded))
		_, token = send.Lend(64)
		Expect(send.SendLent(0, ipA, ipB, token, 0)).To(MatchError(iface.ErrLoanEnded))
		_, token = send.Lend(64)
		Expect(send.SendLent(0, ipB, ipA, token, 24)).To(MatchError(iface.ErrBadAddress))
		Expect(send.SendLent(0, ipA, ipB, token, 24)).To(MatchError(iface.ErrLoanEnded))
		Expect(a.ifc.Stats().Tx.BadAddress).To(BeEquivalentTo(1))
		Expect(a.link.out).To(BeEmpty())
		Expect(a.pool.Stats().InUse).To(BeZero())
	})

	It("lends nothing when the pool is empty (tx.no_mbuf) or the mbuf has not the room, and holds no mbuf then", func() {
		a.link.dead = true
		buf, token := send.Lend(64)
		Expect(buf).To(BeNil())
		Expect(token).To(BeZero())
		Expect(a.ifc.Stats().Tx.NoMbuf).To(BeEquivalentTo(1))
		a.link.dead = false
		buf, token = send.Lend(4096)
		Expect(buf).To(BeNil())
		Expect(token).To(BeZero())
		Expect(a.pool.Stats().InUse).To(BeZero())
	})
})
