// Package siphash is SipHash-2-4 (Aumasson and Bernstein, "SipHash: a
// fast short-input PRF", 2012), the keyed pseudo-random function the
// stack's protocols draw values from that must not be predictable
// without a secret: TCP's initial sequence numbers, timestamp offsets and
// SYN cookies (RFC 6528 section 3 asks for a PRF with a secret key; it
// suggests MD5, Linux uses SipHash), and IPv6's flow labels (RFC 6437
// section 3; Linux's automatic labels come from a siphash flow hash).
//
// Hand-written rather than imported: it is thirty lines, fixed by the
// paper and checked against its test vectors, and the standard library
// has none with a caller-chosen key (hash/maphash's seed is random per
// process, which would make seeded runs differ).
package siphash

import (
	"encoding/binary"
	"math/bits"
)

// state is SipHash's four 64-bit words.
type state struct{ v0, v1, v2, v3 uint64 }

func newState(k0, k1 uint64) state {
	return state{k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d, k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573}
}

func (s *state) round() {
	s.v0 += s.v1
	s.v1 = bits.RotateLeft64(s.v1, 13)
	s.v1 ^= s.v0
	s.v0 = bits.RotateLeft64(s.v0, 32)
	s.v2 += s.v3
	s.v3 = bits.RotateLeft64(s.v3, 16)
	s.v3 ^= s.v2
	s.v0 += s.v3
	s.v3 = bits.RotateLeft64(s.v3, 21)
	s.v3 ^= s.v0
	s.v2 += s.v1
	s.v1 = bits.RotateLeft64(s.v1, 17)
	s.v1 ^= s.v2
	s.v2 = bits.RotateLeft64(s.v2, 32)
}

// block absorbs one 64-bit message word with two compression rounds.
func (s *state) block(w uint64) {
	s.v3 ^= w
	s.round()
	s.round()
	s.v0 ^= w
}

// finish absorbs the last block and runs the four finalization rounds.
func (s *state) finish(last uint64) uint64 {
	s.block(last)
	s.v2 ^= 0xff
	s.round()
	s.round()
	s.round()
	s.round()
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3
}

// Sum64 is SipHash-2-4 of m under the 128-bit key (k0, k1), the key's
// two little-endian halves.
func Sum64(k0, k1 uint64, m []byte) uint64 {
	s := newState(k0, k1)
	n := len(m)
	for ; len(m) >= 8; m = m[8:] {
		s.block(binary.LittleEndian.Uint64(m))
	}
	// The last block: the remaining bytes, little-endian, with the
	// message length's low byte on top (section 2 of the paper).
	last := uint64(n) << 56
	for k := len(m) - 1; k >= 0; k-- {
		last |= uint64(m[k]) << (8 * k)
	}
	return s.finish(last)
}

// Sum64Words is Sum64 of the little-endian bytes of m's words, without
// encoding them: what the protocols hash is a few whole words (a 4-tuple,
// a SYN cookie's counter).
func Sum64Words(k0, k1 uint64, m []uint64) uint64 {
	s := newState(k0, k1)
	for _, w := range m {
		s.block(w)
	}
	return s.finish(uint64(len(m)*8) << 56)
}
