package iface_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// BenchmarkSegmentPath runs what bench/'s bulk workload asks of the
// interface per data segment, at each family through the same harness:
// the sender's pseudo-header sum (stack/tcp asks for one per segment),
// a 1448-byte (IPv4) or 1428-byte (IPv6: MTU 1500 less the 20 bytes
// more of header) segment built in a lent mbuf and sent with the
// link's checksum offload, the mbuf moved as it is to the receiver
// (as hw/ringdev's pair does) with the NIC's checksum verdict, its
// input and delivery, and a 20-byte ACK back the same way. At IPv6 the
// handlers confirm the neighbour on every ACK, as stack/lstack does
// (RFC 4861 section 7.3.1). ns/op is the machine's; for a figure a
// busy machine does not move, count instructions:
//
//	go test -c -o /tmp/iface.test ./stack/iface
//	GOGC=off valgrind --tool=callgrind /tmp/iface.test -test.run '^$' -test.bench 'SegmentPath/ipv6$' -test.benchtime 20000x
//
// (the total at 40000x less that at 20000x, over 20000, is one
// round's instructions).
func BenchmarkSegmentPath(b *testing.B) {
	for _, fam := range []int{4, 6} {
		name := "ipv4"
		if fam == 6 {
			name = "ipv6"
		}
		b.Run(name, func(b *testing.B) {
			p := newPathPair(fam)
			b.ReportAllocs()
			b.SetBytes(int64(p.payload))
			now := time.Millisecond
			for b.Loop() {
				p.round(b, now)
			}
			if p.delivered == 0 {
				b.Fatal("nothing delivered")
			}
		})
	}
}

// pathPair is two interfaces of one family joined back to back, each
// knowing the other's MAC, with a TCP handler that counts.
type pathPair struct {
	a, b      *node
	sa, sb    *iface.SegmentSender
	v6        bool
	payload   int
	delivered int
	ack       []byte
}

func newPathPair(fam int) *pathPair {
	opts := iface.OutputOptions{DontFrag: true, Checksum: iface.ChecksumTCP}
	p := &pathPair{v6: fam == 6, payload: 1448, ack: make([]byte, 20)}
	if p.v6 {
		p.payload = 1428
		nd := ndp.DefaultConfig()
		nd.DupAddrDetectTransmits, nd.MaxRtrSolicitations, nd.MaxRtrSolicitationDelay = 0, 0, 0
		mk := func(mac string, addr string) *node {
			n := newNodeOff(iface.Config{MAC: mac, IPv6: iface.IPv6Config{Address: addr, ND: nd, NDSet: true}}, hwTxAll())
			n.ifc.Start(0)
			n.ifc.Poll(0)
			n.drainOut()
			return n
		}
		p.a, p.b = mk(macA.String(), "fd00::1/64"), mk(macB.String(), "fd00::2/64")
		p.a.ifc.AddNeighbor6(0, ip6B, macB)
		p.a.ifc.Confirm6(0, ip6B)
		p.b.ifc.AddNeighbor6(0, ip6A, macA)
		p.b.ifc.Confirm6(0, ip6A)
		p.a.drainOut()
		p.b.drainOut()
	} else {
		p.a, p.b = newNodeOff(cfgA(), hwTxAll()), newNodeOff(cfgB(), hwTxAll())
		p.a.ifc.AddNeighbor(0, ipB, macB)
		p.b.ifc.AddNeighbor(0, ipA, macA)
	}
	p.sa = iface.NewSegmentSender(p.a.ifc, ipv4.ProtoTCP, opts)
	p.sb = iface.NewSegmentSender(p.b.ifc, ipv4.ProtoTCP, opts)
	for _, n := range []*node{p.a, p.b} {
		ifc := n.ifc
		_ = ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(now time.Duration, s iface.Segment) {
			if s.V6 && len(s.Payload) > 13 && s.Payload[13]&0x10 != 0 {
				ifc.Confirm6(now, s.Src6)
			}
			p.delivered++
		}))
	}
	binary.BigEndian.PutUint16(p.ack[0:], 5001)
	binary.BigEndian.PutUint16(p.ack[2:], 40000)
	p.ack[12], p.ack[13] = 5<<4, 0x10
	return p
}

// round sends one data segment from a to b and one ACK back.
func (p *pathPair) round(b *testing.B, now time.Duration) {
	n := 20 + p.payload
	var sum uint64
	if p.v6 {
		sum = p.sa.PseudoHeaderSum6(ip6A, ip6B, n)
	} else {
		sum = p.sa.PseudoHeaderSum(ipA, ipB, n)
	}
	seg, tok := p.sa.Lend(n)
	binary.BigEndian.PutUint16(seg[0:], 40000)
	binary.BigEndian.PutUint16(seg[2:], 5001)
	seg[12], seg[13] = 5<<4, 0x10
	binary.BigEndian.PutUint16(seg[16:], uint16(sum))
	var err error
	if p.v6 {
		err = p.sa.SendLent6(now, ip6A, ip6B, 7, tok, n)
	} else {
		err = p.sa.SendLent(now, ipA, ipB, tok, n)
	}
	if err != nil {
		b.Fatal(err)
	}
	p.cross(now, p.a, p.b)
	if p.v6 {
		err = p.sb.SendSegment6(now, ip6B, ip6A, 9, p.ack)
	} else {
		err = p.sb.SendSegment(now, ipB, ipA, p.ack)
	}
	if err != nil {
		b.Fatal(err)
	}
	p.cross(now, p.b, p.a)
}

// cross moves every frame from's link sent to to's input, the mbufs
// themselves with the receiving NIC's checksum verdict.
func (p *pathPair) cross(now time.Duration, from, to *node) {
	for k, m := range from.link.out {
		m.Flags = hwRxGood
		to.ifc.Input(now, m)
		from.link.out[k] = nil
	}
	from.link.out = from.link.out[:0]
}
