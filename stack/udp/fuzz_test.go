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
