package iface

import (
	"github.com/savanna-sim/savanna/stack/tcp"
	"github.com/savanna-sim/savanna/stack/udp"
)

// The transport checksum is written through the transport's own wire
// API (tcp's SetChecksum and SetPseudoChecksum, udp.Packet's), so that
// where the field sits and what a computed zero becomes (0xffff for UDP,
// RFC 768) is said once, by the package that owns the format.

// headerLen returns the header length of c's protocol: a segment shorter
// than that has no checksum field to fill.
func (c Checksum) headerLen() int {
	if c == ChecksumTCP {
		return tcp.HeaderLen
	}
	return udp.HeaderLen
}

// fill computes seg's checksum under the pseudo-header whose unfolded
// sum is pseudo and writes it into the protocol's field.
func (c Checksum) fill(seg []byte, pseudo uint64) {
	if c == ChecksumTCP {
		tcp.SetChecksum(seg, pseudo)
		return
	}
	udp.Packet(seg).FillChecksumPseudo(pseudo)
}

// fillPseudo writes only the folded pseudo-header sum into the
// protocol's field, for the NIC to finish (DPDK's rte_ipv4_phdr_cksum
// convention).
func (c Checksum) fillPseudo(seg []byte, pseudo uint64) {
	if c == ChecksumTCP {
		tcp.SetPseudoChecksum(seg, pseudo)
		return
	}
	udp.Packet(seg).SetPseudoChecksum(pseudo)
}
