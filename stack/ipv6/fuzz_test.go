package ipv6_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

type nopSink struct{}

func (nopSink) ReassemblyTimeout(time.Duration, []byte) {}

// FuzzInput feeds arbitrary bytes to the input path (fixed header,
// extension header chain, options, fragments and reassembly) and checks
// that it never panics, that what it reports points inside the packet,
// and that fixed headers round-trip through Emit.
func FuzzInput(f *testing.F) {
	f.Add([]byte(packet(src, dst, ipv6.NextUDP, udp(8))))
	f.Add([]byte(packet(src, dst, ipv6.NextTCP, udp(20), opts(ipv6.NextHopByHop, 0xc2, 4, 0, 1, 0, 0), routing(0, 1))))
	f.Add([]byte(packet(src, group, ipv6.NextUDP, udp(8), opts(ipv6.NextDestOpts, 0xde, 0), opts(ipv6.NextHopByHop))))
	f.Add([]byte(packet(src, dst, ipv6.NextUDP, udp(16), frag(0, true, 1))))
	f.Add([]byte(packet(src, dst, ipv6.NextUDP, udp(16), frag(16, false, 1))))
	f.Add([]byte(packet(src, dst, ipv6.NextDestOpts, []byte{17, 1, 0, 0}, frag(0, true, 2))))
	f.Add([]byte(packet(src, dst, ipv6.NextUDP, udp(8), frag(0, false, 3))))
	rc, err := ipv6.NewReceiver(ipv6.ReceiverConfig{Reasm: ipv6.ReasmConfig{MaxDatagrams: 4, MaxFragments: 8, MaxBytes: 1 << 16}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	var now time.Duration
	f.Fuzz(func(t *testing.T, b []byte) {
		now += time.Second
		orig := append([]byte(nil), b...)
		res := rc.Input(now, b)
		if !bytes.Equal(b, orig) {
			t.Fatalf("input modified the caller's buffer")
		}
		switch res.Action {
		case ipv6.Deliver:
			if res.Offset > len(res.Packet) || res.ProtoPointer >= res.Offset {
				t.Fatalf("delivery out of the packet: %+v", res)
			}
			_ = res.Payload()
			if int(res.Packet.PayloadLen()) != len(res.Packet)-ipv6.HeaderLen {
				t.Fatalf("payload length %d for %d bytes", res.Packet.PayloadLen(), len(res.Packet))
			}
		case ipv6.Drop:
			if res.Err == 0 {
				t.Fatalf("drop without a reason")
			}
			if !res.ICMP.IsZero() && int(res.ICMP.Pointer) >= len(res.Packet) {
				t.Fatalf("pointer %d past the %d-byte packet", res.ICMP.Pointer, len(res.Packet))
			}
		case ipv6.Held:
		default:
			t.Fatalf("no action: %+v", res)
		}
		rc.Poll(now, nopSink{})
		ipv6.UpperLayer(b)
		if r, err := ipv6.Parse(b); err == nil {
			out := make([]byte, ipv6.HeaderLen)
			r.Emit(out)
			if !bytes.Equal(out, b[:ipv6.HeaderLen]) {
				t.Fatalf("fixed header does not round-trip")
			}
		}
	})
}

// FuzzReassembly reads the input as a sequence of fragments of one
// 2048-byte pattern (4 bytes each: identification, offset in 8-byte
// units, length in 8-byte units with M in the top bit) at increasing
// times, and checks that reassembly never panics, stays within its
// bounds, and that whatever it puts back together is the pattern.
func FuzzReassembly(f *testing.F) {
	f.Add([]byte{1, 0, 0x80 | 8, 0, 1, 8, 8, 0})
	f.Add([]byte{1, 8, 8, 0, 1, 0, 0x80 | 8, 0, 1, 4, 0x80 | 8, 0})
	f.Add([]byte{2, 0, 0x80 | 16, 0, 2, 16, 0x80 | 16, 0, 2, 32, 4, 0, 2, 0, 0x80 | 16, 0})
	f.Add([]byte{3, 0, 0, 0, 3, 0, 4, 0, 3, 4, 4, 1})
	const size = 2048
	data := pattern(size + 8*255)
	cfg := ipv6.ReceiverConfig{Reasm: ipv6.ReasmConfig{MaxDatagrams: 2, MaxFragments: 6, MaxBytes: 3000, Timeout: 10 * time.Second}}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4*64 {
			// 64 fragments reach every bound; longer inputs only slow
			// the fuzzer's minimisation down.
			return
		}
		rc, err := ipv6.NewReceiver(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var now time.Duration
		for ; len(b) >= 4; b = b[4:] {
			id, off, n, more := uint32(b[0]&3), int(b[1])*8, int(b[2]&0x7f)*8, b[2]&0x80 != 0
			now += time.Duration(b[3]) * 100 * time.Millisecond
			p := packet(src, dst, ipv6.NextUDP, data[off:off+n], frag(off, more, id))
			res := rc.Input(now, p)
			if rc.Reassembler().BufferedBytes() > cfg.Reasm.MaxBytes {
				t.Fatalf("%d bytes buffered", rc.Reassembler().BufferedBytes())
			}
			if res.Action == ipv6.Deliver && !bytes.Equal(res.Payload(), data[:len(res.Payload())]) {
				t.Fatalf("reassembled %d bytes that are not the pattern", len(res.Payload()))
			}
			rc.Poll(now, nopSink{})
		}
	})
}
