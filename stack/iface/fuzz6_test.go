package iface_test

import (
	"testing"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// FuzzInput6 feeds random frames, most of them 0x86DD, with random rx
// offload flags to a dual-stack interface (a UDP socket, a TCP handler,
// Neighbor Discovery running). It must never panic and never leak an
// mbuf: every mbuf is free, queued on the socket, or waiting for ARP or
// Neighbor Discovery.
func FuzzInput6(f *testing.F) {
	pkt := func(nh uint8, payload []byte) []byte {
		b := make([]byte, ipv6.HeaderLen+len(payload))
		ipv6.Repr{Src: ip6A, Dst: ip6B, NextHeader: nh, PayloadLen: len(payload), HopLimit: 64}.Emit(ipv6.Packet(b))
		copy(b[ipv6.HeaderLen:], payload)
		return b
	}
	echo := icmpv6.Repr{Type: icmpv6.TypeEchoRequest, Ident: 1, Seq: 1, Data: []byte("x")}
	eb := make([]byte, echo.BufferLen())
	echo.Emit(eb, ip6A, ip6B)
	f.Add(uint8(0), ip6Frame(macB, macA, pkt(ipv6.NextICMPv6, eb)))
	f.Add(uint8(0), ip6Frame(macB, macA, pkt(ipv6.NextUDP, udpDatagram(1, 7, []byte("hi")))))
	f.Add(uint8(3), ip6Frame(macB, macA, pkt(ipv6.NextTCP, make([]byte, 20))))
	f.Add(uint8(0), ip6Frame(macB, macA, pkt(ipv6.NextFragment, []byte{17, 0, 0, 1, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8})))
	f.Add(uint8(0), ip6Frame(macB, macA, pkt(ipv6.NextHopByHop, []byte{59, 0, 0x80, 4, 0, 0, 0, 0})))
	f.Add(uint8(0), ip6Frame(macB, macA, pkt(135, make([]byte, 24))))
	f.Add(uint8(1), []byte{})

	c := cfgB()
	c.IPv6 = iface.IPv6Config{Address: "fd00::2/64"}
	n := newNode(c)
	n.ifc.Start(0)
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
		if len(b) >= ether.HeaderLen && flags&0x80 == 0 {
			// Most inputs are IPv6 to us: keep the fuzzer in that path.
			ether.Repr{Dst: macB, Src: macA, EtherType: ether.TypeIPv6}.Emit(ether.Frame(b))
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
			if _, _, _, ok := sock.RecvFrom6(buf); !ok {
				break
			}
		}
		if in, want := n.pool.Stats().InUse, n.ifc.ARP().Pending()+n.ifc.NDP().Pending(); in != want {
			t.Fatalf("mbufs in use %d, want %d waiting for ARP and ND", in, want)
		}
	})
}
