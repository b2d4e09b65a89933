package nic

// The NIC model's own Internet checksum (RFC 1071). The model is a test
// oracle for the stack: it verifies the checksums the stack writes (rx
// offload flags) and fills those the stack leaves to it (tx offload), so
// it must not share the stack's code (stack/checksum, unrolled and
// carry-chained for speed). A bug there would otherwise be in both sides
// of the comparison and every check would pass. This one is the plain
// algorithm of RFC 1071 section 4.1, one 16-bit word at a time: slower
// and easy to read, which is what an oracle needs.

// sum16 adds the big-endian 16-bit words of b to sum (RFC 1071 section
// 4.1); an odd final byte is padded with a zero byte on the right. Pieces
// summed one after another must have even length, except the last.
// Carries are kept in the upper bits of the uint64 and folded at the end.
func sum16(sum uint64, b []byte) uint64 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint64(b[i])<<8 | uint64(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint64(b[len(b)-1]) << 8
	}
	return sum
}

// fold16 folds the carries of sum back into 16 bits: the one's
// complement sum (RFC 1071 section 2 (B), end-around carry).
func fold16(sum uint64) uint16 {
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

// inetChecksum is the checksum field value for b: the one's complement of
// the one's complement sum of its words. Summing a header whose checksum
// field is right gives 0.
func inetChecksum(b []byte) uint16 { return checksumFrom(0, b) }

// checksumFrom is inetChecksum of b with sum (a pseudo-header's, unfolded)
// added first.
func checksumFrom(sum uint64, b []byte) uint16 { return ^fold16(sum16(sum, b)) }

// pseudoSumV4 is the unfolded sum of the IPv4 pseudo-header of TCP and UDP
// (RFC 9293 section 3.1, RFC 768): source and destination address, zero,
// protocol, and the transport length.
func pseudoSumV4(src, dst [4]byte, proto uint8, l4len int) uint64 {
	sum := sum16(0, src[:])
	sum = sum16(sum, dst[:])
	return sum + uint64(proto) + uint64(l4len)
}

// pseudoSumV6 is the unfolded sum of the IPv6 pseudo-header (RFC 8200
// section 8.1): source and destination address, the 32-bit upper-layer
// length and the next header value.
func pseudoSumV6(src, dst []byte, proto uint8, l4len int) uint64 {
	sum := sum16(0, src)
	sum = sum16(sum, dst)
	return sum + uint64(l4len>>16) + uint64(l4len&0xffff) + uint64(proto)
}
