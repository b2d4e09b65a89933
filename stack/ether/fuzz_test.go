package ether_test

import (
	"testing"

	"github.com/savanna-sim/savanna/stack/ether"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte{})
	f.Add(append(make([]byte, 12), 0x08, 0x00, 1, 2, 3))
	f.Add(append(make([]byte, 12), 0x81, 0x00, 0, 1, 0x08, 0x06))
	f.Add(append(make([]byte, 12), 0x88, 0xa8, 0, 1, 0x81, 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ether.Parse(ether.Frame(b))
		if err != nil {
			return
		}
		f := ether.Frame(b)
		if r.HeaderLen() != f.HeaderLen() || len(f.Payload()) != len(b)-r.HeaderLen() {
			t.Fatalf("header length mismatch")
		}
		out := make([]byte, r.HeaderLen())
		r.Emit(ether.Frame(out))
		back, err := ether.Parse(ether.Frame(out))
		if err != nil || back != r {
			t.Fatalf("round trip: %+v vs %+v (%v)", back, r, err)
		}
	})
}
