package arpshare

import "github.com/savanna-sim/savanna/stack/ether"

// IPv6 and ICMPv6 constants the classifier reads: the fixed header's
// length and the offset of its Next Header field (RFC 8200 section 3),
// ICMPv6's next header value (RFC 4443 section 1), and Neighbor
// Solicitation's and Advertisement's types (RFC 4861 section 4.3, 4.4).
const (
	ipv6HeaderLen  = 40
	ipv6NextHeader = 6
	nextICMPv6     = 58
	typeNS         = 135
	typeNA         = 136
)

// isShared reports whether frame is one the port's instances must each
// see: an ARP frame (RFC 826), or an IPv6 Neighbor Solicitation or
// Advertisement (RFC 4861 section 7), which plays ARP's part for IPv6.
// Every instance keeps its own neighbour cache, yet an ND message lands
// on the one queue RSS hashes its addresses to; a peer that sent a solicitation would wait
// for a reply another instance got, and resolve only by retransmitting
// into the same queue (RFC 4861 section 7.2.2).
//
// ND messages are recognised with ICMPv6 right after the fixed header
// (next header 58). RFC 4861 does not forbid extension headers in front,
// but no ND sender puts any there, and walking the chain here would
// duplicate stack/ipv6's parser on the hot path of every IPv6 frame; a
// message behind an extension header is simply not shared, and resolves
// as before, by retransmission. The copy is validated by the receiving
// instance's ND (hop limit 255, checksum), as any frame is.
func isShared(frame []byte) bool {
	f, err := ether.Check(frame)
	if err != nil {
		return false
	}
	switch f.EtherType() {
	case ether.TypeARP:
		return true
	case ether.TypeIPv6:
		p := f.Payload()
		if len(p) <= ipv6HeaderLen || p[0]>>4 != 6 || p[ipv6NextHeader] != nextICMPv6 {
			return false
		}
		t := p[ipv6HeaderLen]
		return t == typeNS || t == typeNA
	}
	return false
}
