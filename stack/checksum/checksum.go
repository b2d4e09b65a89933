// Package checksum computes the Internet checksum of RFC 1071: the 16-bit
// one's complement of the one's complement sum, used by IPv4, ICMP, UDP
// and TCP. Sums are kept unfolded in a uint64 so that pieces (a
// pseudo-header, a header, a payload) can be added before folding once.
package checksum

import "encoding/binary"

// Add returns sum plus the 16-bit big-endian words of b, a final odd byte
// padded with zero (RFC 1071 section 4.1). Pieces added one after another
// must each have even length, except the last.
func Add(sum uint64, b []byte) uint64 {
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
