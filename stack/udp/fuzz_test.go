package udp_test

import (
	"testing"

	"github.com/savanna-sim/savanna/stack/udp"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte(datagram(1, 2, []byte("hello"))))
	f.Add([]byte{0, 1, 0, 2, 0, 7, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, verify := range []bool{true, false} {
			r, err := udp.Parse(udp.Packet(b), src, dst, verify)
			if err != nil {
				continue
			}
			_ = udp.Packet(b).Payload()
			out := make([]byte, r.BufferLen())
			copy(out[udp.HeaderLen:], b[udp.HeaderLen:r.BufferLen()])
			r.Emit(udp.Packet(out), src, dst, true)
			back, err := udp.Parse(udp.Packet(out), src, dst, true)
			if err != nil || back.SrcPort != r.SrcPort || back.PayloadLen != r.PayloadLen {
				t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
			}
		}
	})
}

// FuzzCheck: Check never panics, returns a view of exactly the length
// field's bytes within the input, and agrees with Parse (which it
// serves) on what is malformed.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(datagram(1, 2, []byte("hello"))))
	f.Add(append([]byte(datagram(1, 2, []byte("pad"))), 0, 0, 0))
	f.Add([]byte{0, 1, 0, 2, 0, 7, 0, 0})
	f.Add([]byte{0, 1, 0, 2, 0xff, 0xff, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := udp.Check(b)
		_, perr := udp.Parse(udp.Packet(b), src, dst, false)
		if err != perr {
			t.Fatalf("Check says %v, Parse %v", err, perr)
		}
		if err != nil {
			return
		}
		if len(p) != int(p.Length()) || len(p) > len(b) || len(p) < udp.HeaderLen || &p[0] != &b[0] {
			t.Fatalf("view of %d bytes, length field %d, input %d", len(p), p.Length(), len(b))
		}
	})
}
