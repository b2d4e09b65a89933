package ringdev

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
)

// DefaultRSSKey returns Microsoft's published default Toeplitz key
// ("Verifying the RSS Hash Calculation", rss.MicrosoftKey), which NIC
// drivers and DPDK use by default. A fresh copy each call.
func DefaultRSSKey() []byte { return rss.MicrosoftKey() }

// The header fields the port's RSS classifier reads (IEEE 802.3, RFC 791,
// RFC 793: the ports open the TCP header).
//
// The port keeps its own small classifier on purpose rather than the
// stack's wire views (stack/ether.Frame, stack/ipv4.Packet): a device
// stands below the product and must not import it (internal/archtest,
// "hw implementations -/-> product"), and a NIC that parsed frames with
// the stack's own code would agree with the stack's bugs, as the NIC
// model's classifier (sim/nic's Classify) is kept apart for the same
// reason. The hash input is internal/rss's, which sim/nic shares.
const (
	ethTypeOff    = 12 // EtherType, in an untagged frame
	ethHeaderLen  = 14
	etherTypeIPv4 = 0x0800

	ipv4MinHeader = 20
	ipv4Version   = 4
	ipv4FragOff   = 6 // flags and fragment offset
	ipv4FragMask  = 0x3fff
	ipv4ProtoOff  = 9
	ipv4SrcOff    = 12
	ipv4DstOff    = 16
	protoTCP      = 6
	l4PortsLen    = 4 // source and destination port
)

// flowHash returns the RSS hash of an Ethernet frame under types and the
// key whose table is t,
// and false when the frame is not hashable (not IPv4, or its type is not
// enabled): such frames go to queue 0 as on Intel NICs.
func flowHash(frame []byte, types hw.RSSHashType, t *rss.Table) (uint32, bool) {
	if len(frame) < ethHeaderLen+ipv4MinHeader || binary.BigEndian.Uint16(frame[ethTypeOff:]) != etherTypeIPv4 {
		return 0, false
	}
	ip := frame[ethHeaderLen:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != ipv4Version || ihl < ipv4MinHeader || len(ip) < ihl {
		return 0, false
	}
	src, dst := [4]byte(ip[ipv4SrcOff:]), [4]byte(ip[ipv4DstOff:])
	fragmented := binary.BigEndian.Uint16(ip[ipv4FragOff:])&ipv4FragMask != 0
	if ip[ipv4ProtoOff] == protoTCP && !fragmented && types&hw.RSSIPv4TCP != 0 && len(ip) >= ihl+l4PortsLen {
		l4 := ip[ihl:]
		in := rss.IPv4Input(src, dst, binary.BigEndian.Uint16(l4[0:]), binary.BigEndian.Uint16(l4[2:]))
		return t.Hash(in[:]), true
	}
	if types&hw.RSSIPv4 != 0 {
		in := rss.IPv4Input(src, dst, 0, 0)
		return t.Hash(in[:8]), true
	}
	return 0, false
}
