package iface_test

import (
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

type nopTCP struct{}

func (nopTCP) HandleSegment(time.Duration, iface.Segment)     {}
func (nopTCP) HandleICMPError(time.Duration, iface.ICMPError) {}

// FuzzInput feeds random frames, with random rx offload flags, to an
// interface with a UDP socket and a TCP handler. It must never panic and
// never leak an mbuf: every mbuf is free, queued on the socket or waiting
// for ARP.
func FuzzInput(f *testing.F) {
	arpReq := make([]byte, 60)
	ether.Repr{Dst: ether.BroadcastAddr(), Src: macA, EtherType: ether.TypeARP}.Emit(ether.Frame(arpReq))
	arp.Repr{Op: arp.OpRequest, SenderHW: macA, SenderIP: ipA, TargetIP: ipB}.Emit(arp.Packet(arpReq[14:]))
	f.Add(uint8(0), arpReq)
	f.Add(uint8(0), frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoICMP, echoRequest())))
	f.Add(uint8(0), frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 7, []byte("hi")))))
	f.Add(uint8(0), frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoUDP, udpDatagram(1, 9, []byte("closed")))))
	f.Add(uint8(3), frame(macB, macA, datagram(ipA, ipB, ipv4.ProtoTCP, make([]byte, 20))))
	frag := make([]byte, 28)
	ipv4.Repr{Src: ipA, Dst: ipB, Protocol: ipv4.ProtoUDP, TTL: 1, Ident: 3, MoreFrags: true, PayloadLen: 8}.Emit(ipv4.Packet(frag), true)
	f.Add(uint8(0), frame(macB, macA, frag))
	f.Add(uint8(0), frame(macB, [6]byte{2, 9, 9, 9, 9, 9}, datagram([4]byte{10, 0, 0, 77}, ipB, ipv4.ProtoICMP, echoRequest())))
	f.Add(uint8(1), []byte{})

	n := newNode(cfgB())
	sock, err := n.ifc.ListenUDP(7)
	if err != nil {
		f.Fatal(err)
	}
	if err := n.ifc.RegisterTransport(ipv4.ProtoTCP, nopTCP{}); err != nil {
		f.Fatal(err)
	}
	var now time.Duration
	buf := make([]byte, 2048)
	f.Fuzz(func(t *testing.T, flags uint8, b []byte) {
		if len(b) > 1900 {
			b = b[:1900]
		}
		now += 100 * time.Millisecond
		m := n.pool.Get()
		if m == nil {
			t.Fatalf("pool exhausted: leak (in use %d)", n.pool.Stats().InUse)
		}
		if err := m.SetData(b); err != nil {
			t.Fatal(err)
		}
		m.Flags = hw.OffloadFlags(flags) & (hw.RxIPChecksumGood | hw.RxIPChecksumBad | hw.RxL4ChecksumGood | hw.RxL4ChecksumBad)
		n.ifc.Input(now, m)
		n.ifc.Poll(now)
		n.link.take()
		for {
			if _, _, ok := sock.RecvFrom(buf); !ok {
				break
			}
		}
		if in, want := n.pool.Stats().InUse, n.ifc.ARP().Pending(); in != want {
			t.Fatalf("mbufs in use %d, want %d waiting for ARP", in, want)
		}
	})
}
