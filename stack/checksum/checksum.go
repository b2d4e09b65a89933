// Package checksum computes the Internet checksum of RFC 1071: the 16-bit
// one's complement of the one's complement sum, used by IPv4, ICMP, UDP
// and TCP. Sums are kept unfolded in a uint64 so that pieces (a
// pseudo-header, a header, a payload) can be added before folding once.
package checksum

import (
	"encoding/binary"
	"math/bits"
)

// Add returns sum plus the 16-bit big-endian words of b, a final odd byte
// padded with zero (RFC 1071 section 4.1). Pieces added one after another
// must each have even length, except the last. The result is meant to be
// folded (Fold, Finish): two sums of the same words may differ unfolded
// but fold to the same value.
//
// Long inputs are summed eight bytes at a time with a carry chain in
// native (little-endian) order, RFC 1071 section 2's byte-order
// independence and deferred carries: the one's complement sum of the
// byte-swapped words is the byte-swapped sum, so the folded 16-bit result
// is swapped back and added to sum.
func Add(sum uint64, b []byte) uint64 {
	if len(b) >= 32 {
		// Two independent carry chains, so that the additions of one
		// do not wait for the carry of the other.
		var a0, c0, a1, c1 uint64
		for len(b) >= 32 {
			a0, c0 = bits.Add64(a0, binary.LittleEndian.Uint64(b), c0)
			a1, c1 = bits.Add64(a1, binary.LittleEndian.Uint64(b[8:]), c1)
			a0, c0 = bits.Add64(a0, binary.LittleEndian.Uint64(b[16:]), c0)
			a1, c1 = bits.Add64(a1, binary.LittleEndian.Uint64(b[24:]), c1)
			b = b[32:]
		}
		for len(b) >= 8 {
			a0, c0 = bits.Add64(a0, binary.LittleEndian.Uint64(b), c0)
			b = b[8:]
		}
		// Join the chains with end-around carries (RFC 1071 section 2
		// (B)): a carry out of bit 63 is added back in at bit 0.
		acc, c := bits.Add64(a0, a1, 0)
		acc, c = bits.Add64(acc, c0+c1, c)
		acc, c = bits.Add64(acc, 0, c)
		acc += c
		sum += uint64(bits.ReverseBytes16(fold64(acc)))
	}
	for len(b) >= 8 {
		v := binary.BigEndian.Uint64(b)
		sum += v >> 48
		sum += (v >> 32) & 0xffff
		sum += (v >> 16) & 0xffff
		sum += v & 0xffff
		b = b[8:]
	}
	for len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

// fold64 folds a 64-bit one's complement sum to 16 bits.
func fold64(x uint64) uint16 {
	x = (x >> 32) + (x & 0xffffffff)
	x = (x >> 32) + (x & 0xffffffff)
	x = (x >> 16) + (x & 0xffff)
	x = (x >> 16) + (x & 0xffff)
	x = (x >> 16) + (x & 0xffff)
	return uint16(x)
}

// Fold folds an unfolded sum to 16 bits (without complementing it).
func Fold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = (sum & 0xffff) + (sum >> 16)
	}
	return uint16(sum)
}

// Finish folds sum and returns its one's complement: the value to put in
// a checksum field.
func Finish(sum uint64) uint16 { return ^Fold(sum) }

// Checksum returns the Internet checksum of b.
func Checksum(b []byte) uint16 { return Finish(Add(0, b)) }

// PseudoHeaderV4 returns the unfolded sum of the IPv4 pseudo-header of
// RFC 793 section 3.1 / RFC 768: source, destination, protocol and the
// transport length.
func PseudoHeaderV4(src, dst [4]byte, proto uint8, length int) uint64 {
	var sum uint64
	sum += uint64(src[0])<<8 | uint64(src[1])
	sum += uint64(src[2])<<8 | uint64(src[3])
	sum += uint64(dst[0])<<8 | uint64(dst[1])
	sum += uint64(dst[2])<<8 | uint64(dst[3])
	sum += uint64(proto)
	sum += uint64(length)
	return sum
}

// Update returns the checksum after a 16-bit word of the covered data
// changes from old to new, without summing the data again (RFC 1624,
// equation 3: HC' = ~(~HC + ~m + m')).
func Update(check, old, new uint16) uint16 {
	sum := uint64(^check) + uint64(^old) + uint64(new)
	return ^Fold(sum)
}
