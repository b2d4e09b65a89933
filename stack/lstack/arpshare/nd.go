package arpshare

import (
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
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
		p := ipv6.Packet(f.Payload())
		if len(p) <= ipv6.HeaderLen || p.Version() != 6 || p.NextHeader() != ipv6.NextICMPv6 {
			return false
		}
		t := icmpv6.Header(p[ipv6.HeaderLen:]).Type()
		return t == icmpv6.TypeNeighborSolicitation || t == icmpv6.TypeNeighborAdvertisement
	}
	return false
}
