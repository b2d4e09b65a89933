package ipv6

// PseudoHeaderSum returns the unfolded one's complement sum of the IPv6
// pseudo-header of RFC 8200 section 8.1 that every upper-layer checksum
// (TCP, UDP, ICMPv6) covers: source, destination, the 32-bit upper-layer
// packet length and the next header value in the low byte of a 32-bit
// word. dst is the final destination: with a routing header that is the
// last address of the header, not the packet's current destination.
func PseudoHeaderSum(src, dst Addr, length int, proto uint8) uint64 {
	var sum uint64
	for i := 0; i < AddrLen; i += 2 {
		sum += uint64(src[i])<<8 | uint64(src[i+1])
		sum += uint64(dst[i])<<8 | uint64(dst[i+1])
	}
	l := uint32(length)
	sum += uint64(l >> 16)
	sum += uint64(l & 0xffff)
	sum += uint64(proto)
	return sum
}
