package ipv6

import "encoding/binary"

// PseudoHeaderSum returns the unfolded one's complement sum of the IPv6
// pseudo-header of RFC 8200 section 8.1 that every upper-layer checksum
// (TCP, UDP, ICMPv6) covers: source, destination, the 32-bit upper-layer
// packet length and the next header value in the low byte of a 32-bit
// word. dst is the final destination: with a routing header that is the
// last address of the header, not the packet's current destination.
//
// The addresses are read as four 64-bit big-endian words and added as
// their eight 32-bit halves, not as sixteen 16-bit words: 2^16 is 1
// modulo 2^16-1, so a sum of 32-bit words folds (checksum.Fold) to the
// same 16 bits as the sum of their 16-bit halves (RFC 1071 section 2
// (C), "parallel summation"), and, like every sum checksum.Add returns,
// the result is only meant to be folded. It runs at least twice per TCP
// segment sent over IPv6 (the engine's sum and the offload's), where
// the byte-wise loop it replaces cost four times IPv4's.
func PseudoHeaderSum(src, dst Addr, length int, proto uint8) uint64 {
	a, b := binary.BigEndian.Uint64(src[0:8]), binary.BigEndian.Uint64(src[8:16])
	c, d := binary.BigEndian.Uint64(dst[0:8]), binary.BigEndian.Uint64(dst[8:16])
	const lo = 0xffffffff
	l := uint64(uint32(length))
	return a>>32 + a&lo + b>>32 + b&lo + c>>32 + c&lo + d>>32 + d&lo + l>>16 + l&0xffff + uint64(proto)
}
