package ipv6

import (
	"encoding/binary"
	"math/bits"
)

// sipHash24 is SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast
// short-input PRF", 2012): a keyed pseudo-random function of a short
// message under a 128-bit key (k0, k1, the key's two little-endian
// halves), built for hash tables and labels whose values must not be
// predictable without the key. Linux keys its automatic IPv6 flow labels
// the same way (net/core/flow_dissector.c's __flow_hash_from_keys uses
// siphash over the flow keys, ip6_make_flowlabel in
// include/net/ipv6.h takes the label from that hash). Hand-written
// rather than imported: it is thirty lines, the function is fixed by
// the paper and checked against its test vectors, and the standard
// library has none with a caller-chosen key (hash/maphash's seed is
// random per process, which would make seeded runs differ).
func sipHash24(k0, k1 uint64, m []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
		v0 += v1
		v1 = bits.RotateLeft64(v1, 13)
		v1 ^= v0
		v0 = bits.RotateLeft64(v0, 32)
		v2 += v3
		v3 = bits.RotateLeft64(v3, 16)
		v3 ^= v2
		v0 += v3
		v3 = bits.RotateLeft64(v3, 21)
		v3 ^= v0
		v2 += v1
		v1 = bits.RotateLeft64(v1, 17)
		v1 ^= v2
		v2 = bits.RotateLeft64(v2, 32)
	}
	n := len(m)
	for ; len(m) >= 8; m = m[8:] {
		w := binary.LittleEndian.Uint64(m)
		v3 ^= w
		round()
		round()
		v0 ^= w
	}
	// The last block: the remaining bytes, little-endian, with the
	// message length's low byte on top (section 2 of the paper).
	last := uint64(n) << 56
	for k := len(m) - 1; k >= 0; k-- {
		last |= uint64(m[k]) << (8 * k)
	}
	v3 ^= last
	round()
	round()
	v0 ^= last
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}
