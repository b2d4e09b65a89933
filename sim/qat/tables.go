package qat

import "github.com/savanna-sim/savanna/internal/inflate"

// deflateTables are the length and distance code tables of RFC 1951
// section 3.2.5. They are computed, not declared as package variables, so
// the package holds no mutable state.
type deflateTables struct {
	lbase [29]uint16 // base length of length codes 257..285
	lext  [29]uint8  // extra bits of length codes
	dbase [30]uint16 // base distance of distance codes 0..29
	dext  [30]uint8  // extra bits of distance codes
}

func newDeflateTables() deflateTables {
	var t deflateTables
	// Length codes 257..264 carry no extra bits, then every four codes
	// carry one more, up to 5; code 285 is 258 exactly.
	for c := 0; c < 28; c++ {
		if c >= 8 {
			t.lext[c] = uint8((c - 4) / 4)
		}
		if c == 0 {
			t.lbase[c] = 3
		} else {
			t.lbase[c] = t.lbase[c-1] + 1<<t.lext[c-1]
		}
	}
	t.lbase[28], t.lext[28] = 258, 0
	// Distance codes 0..3 carry no extra bits, then every two codes carry
	// one more, up to 13.
	for c := 0; c < 30; c++ {
		if c >= 4 {
			t.dext[c] = uint8((c - 2) / 2)
		}
		if c == 0 {
			t.dbase[c] = 1
		} else {
			t.dbase[c] = t.dbase[c-1] + 1<<t.dext[c-1]
		}
	}
	return t
}

// fixedLitLengths returns the code lengths of the fixed literal/length
// code (RFC 1951 section 3.2.6), from the decoder so that the encoder and
// the decoder share one table.
func fixedLitLengths() [288]uint8 { return inflate.FixedLitLengths() }

// canonicalCodes assigns the canonical Huffman codes of RFC 1951 section
// 3.2.2 to lengths and returns them bit-reversed, ready to be written
// least significant bit first.
func canonicalCodes(lengths []uint8, codes []uint16) {
	var count [16]uint16
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	var next [16]uint16
	code := uint16(0)
	for bits := 1; bits < 16; bits++ {
		code = (code + count[bits-1]) << 1
		next[bits] = code
	}
	for i, l := range lengths {
		if l == 0 {
			continue
		}
		codes[i] = reverseBits(next[l], l)
		next[l]++
	}
}

// reverseBits reverses the low n bits of v.
func reverseBits(v uint16, n uint8) uint16 {
	r := uint16(0)
	for i := uint8(0); i < n; i++ {
		r = r<<1 | v&1
		v >>= 1
	}
	return r
}
