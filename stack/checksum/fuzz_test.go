package checksum_test

import (
	"encoding/binary"
	"testing"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// FuzzAdd checks the wide summing loop against RFC 1071's 16-bit sum on
// arbitrary bytes (segments are untrusted input) and starting sums.
func FuzzAdd(f *testing.F) {
	f.Add([]byte{}, uint32(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint32(0xffff))
	f.Add(make([]byte, 77), uint32(1))
	f.Fuzz(func(t *testing.T, b []byte, start uint32) {
		var ref uint64 = uint64(start)
		p := b
		for len(p) >= 2 {
			ref += uint64(binary.BigEndian.Uint16(p))
			p = p[2:]
		}
		if len(p) == 1 {
			ref += uint64(p[0]) << 8
		}
		if got, want := checksum.Fold(checksum.Add(uint64(start), b)), checksum.Fold(ref); got != want {
			t.Fatalf("%d bytes from %#x: folded sum %#04x, want %#04x", len(b), start, got, want)
		}
	})
}
