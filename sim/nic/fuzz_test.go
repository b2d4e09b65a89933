package nic_test

import (
	"net"
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/nic"
)

// FuzzClassify feeds arbitrary bytes to the frame classifier and the RSS
// hash: they must never panic, and every offset the classifier reports
// must lie within the frame.
func FuzzClassify(f *testing.F) {
	f.Add(udpFrame(64, 1))
	f.Add(buildFrame(flow{src: net.IPv4(1, 2, 3, 4), dst: net.IPv4(5, 6, 7, 8), sport: 1, dport: 2, tcp: true, payload: 3}))
	f.Add(buildFrame(flow{ipv6: true, src: net.ParseIP("::1"), dst: net.ParseIP("::2"), sport: 1, dport: 2, tcp: true}))
	f.Add([]byte{})
	f.Add(make([]byte, 14))
	// VLAN-tagged IPv6 with a fragment header.
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0, 0, 1, 0x86, 0xdd,
		0x60, 0, 0, 0, 0, 16, 44, 64, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 2, 0, 8, 0, 0})
	key := nic.MicrosoftRSSKey()
	f.Fuzz(func(t *testing.T, frame []byte) {
		var fi nic.FrameInfo
		nic.Classify(frame, &fi)
		if fi.L2Len > len(frame) || fi.L2Len+fi.L3Len > len(frame) || fi.L2Len+fi.L3Total > len(frame) {
			t.Fatalf("offsets beyond the frame: %+v for %d bytes", fi, len(frame))
		}
		if fi.L4 == nic.L4TCP || fi.L4 == nic.L4UDP {
			if fi.L4Off()+fi.L4Len > fi.L2Len+fi.L3Total {
				t.Fatalf("L4 header beyond the datagram: %+v", fi)
			}
		}
		_, _ = nic.RSSHash(key, frame, hw.RSSIPv4|hw.RSSIPv4TCP|hw.RSSIPv4UDP|hw.RSSIPv6|hw.RSSIPv6TCP|hw.RSSIPv6UDP)
		_ = nic.ToeplitzHash(key[:3], frame)
		if len(frame) <= 36 && nic.ToeplitzHash(key, frame) != nic.ToeplitzTableHash(key, frame) {
			t.Fatalf("table hash differs from the bit loop for % x", frame)
		}
	})
}

// FuzzPortPath sends arbitrary bytes through a port with every tx
// offload requested (with arbitrary header lengths) and a receiving port
// with RSS and every rx offload: nothing may panic, and the frame must be
// accounted for.
func FuzzPortPath(f *testing.F) {
	f.Add(udpFrame(64, 1), uint8(7), uint16(14), uint16(20))
	f.Add(buildFrame(flow{src: net.IPv4(1, 2, 3, 4), dst: net.IPv4(5, 6, 7, 8), sport: 1, dport: 2, tcp: true, payload: 3}), uint8(5), uint16(0), uint16(0))
	f.Add(buildFrame(flow{ipv6: true, src: net.ParseIP("::1"), dst: net.ParseIP("::2"), sport: 1, dport: 2, payload: 9}), uint8(4), uint16(14), uint16(40))
	f.Add(make([]byte, 20), uint8(1), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, frame []byte, ask uint8, l2, l3 uint16) {
		if len(frame) > 9000 {
			return
		}
		eng := newEngineForFuzz()
		mem := newTestMem(64, 1)
		ao, bo := defaultOpts(), defaultOpts()
		ao.mbufs, bo.mbufs, bo.rxq = 64, 64, 2
		ao.txOffloads = hw.TxOffloadIPv4Checksum | hw.TxOffloadTCPChecksum | hw.TxOffloadUDPChecksum
		bo.rss = hw.RSSIPv4 | hw.RSSIPv4TCP | hw.RSSIPv4UDP | hw.RSSIPv6 | hw.RSSIPv6TCP | hw.RSSIPv6UDP
		bo.rxOffloads = hw.RxOffloadIPv4Checksum | hw.RxOffloadTCPChecksum | hw.RxOffloadUDPChecksum | hw.RxOffloadRSSHash
		a, pool := newPort(eng, mem, 0, "a", ao)
		b, _ := newPort(eng, mem, 1, "b", bo)
		if _, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{}); err != nil {
			t.Fatal(err)
		}
		m := pool.Get()
		if m.SetData(frame) != nil {
			m.Free()
			return
		}
		m.Flags = hw.OffloadFlags(ask&7) << 32
		m.L2Len, m.L3Len = l2, l3
		if a.TxBurst(0, []*hw.Mbuf{m}) != 1 {
			t.Fatal("TxBurst refused one frame")
		}
		eng.Run()
		as, bs := a.Stats(), b.Stats()
		if as.OPackets+as.OErrors != 1 || as.OPackets != bs.IPackets+bs.IErrors+bs.IMissed+bs.RxNoMbuf {
			t.Fatalf("frame not accounted for: tx %+v rx %+v", as, bs)
		}
	})
}
