package tcp

import "math/bits"

// sipKey is a 128-bit SipHash key drawn from the stack's random stream.
type sipKey [2]uint64

// sipHash24 is SipHash-2-4 (Aumasson and Bernstein, 2012) over an input
// of whole 64-bit words (six at most here: an IPv6 4-tuple and a SYN
// cookie's word), the keyed pseudo-random function RFC 6528 section 3
// asks for (it suggests MD5; any PRF with a secret key will do, and
// Linux uses SipHash too).
func sipHash24(k sipKey, m []uint64) uint64 {
	v0 := k[0] ^ 0x736f6d6570736575
	v1 := k[1] ^ 0x646f72616e646f6d
	v2 := k[0] ^ 0x6c7967656e657261
	v3 := k[1] ^ 0x7465646279746573
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
	for _, w := range m {
		v3 ^= w
		round()
		round()
		v0 ^= w
	}
	b := uint64(len(m)*8) << 56
	v3 ^= b
	round()
	round()
	v0 ^= b
	v2 ^= 0xff
	round()
	round()
	round()
	round()
	return v0 ^ v1 ^ v2 ^ v3
}
