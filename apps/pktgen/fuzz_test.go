package pktgen

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// FuzzStampOf feeds received-frame bytes to stampOf, the classifier of
// what comes back: it must never panic, and a stamp it accepts must
// carry the magic and lie inside the frame's length (not merely its
// capacity, which a length field running past the data would reach).
func FuzzStampOf(f *testing.F) {
	ep := Endpoints{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
		SrcIP: netip.MustParseAddr("10.0.0.1"), DstIP: netip.MustParseAddr("10.0.0.2")}
	g, err := New(Config{Size: 64}, ep, nil, 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	own := append([]byte(nil), g.template...)
	stamp(own[g.stampOff:]).set(7, time.Millisecond)
	f.Add(own)
	f.Add(own[:len(own)-10])
	f.Add(g.template)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		s, ok := stampOf(frame)
		if !ok {
			return
		}
		if !s.valid() {
			t.Fatalf("accepted a stamp without the magic: % x", s)
		}
		// s is a view into frame: its offset there is what its capacity
		// lost.
		if off := cap(frame) - cap(s); off+len(s) > len(frame) {
			t.Fatalf("stamp at %d..%d outside a %d-byte frame", off, off+len(s), len(frame))
		}
	})
}
