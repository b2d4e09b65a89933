package pktgen

import (
	"encoding/binary"
	"time"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/udp"
)

// magic marks pktgen's payloads, so that foreign frames are not measured.
const magic = 0x53564b54 // "SVKT"

// stampLen is a stamp's length: magic, sequence number and send time.
const stampLen = 4 + 4 + 8

// stamp is a zero-copy view of pktgen's own payload format, the one wire
// format this package owns: magic, the sequence number's low 32 bits and
// the send time in nanoseconds, big-endian. The headers around it are
// read and written through the stack's views (ether, ipv4, udp).
// Accessors assume stampLen bytes; use valid first on received bytes.
type stamp []byte

// valid reports whether s is long enough and starts with the magic.
func (s stamp) valid() bool { return len(s) >= stampLen && binary.BigEndian.Uint32(s) == magic }

// seq returns the sequence number's low 32 bits.
func (s stamp) seq() uint32 { return binary.BigEndian.Uint32(s[4:]) }

// sent returns the send time.
func (s stamp) sent() time.Duration { return time.Duration(binary.BigEndian.Uint64(s[8:])) }

// set writes the magic, seq and sent.
func (s stamp) set(seq uint32, sent time.Duration) {
	binary.BigEndian.PutUint32(s, magic)
	binary.BigEndian.PutUint32(s[4:], seq)
	binary.BigEndian.PutUint64(s[8:], uint64(sent))
}

// stampOf returns the stamp in frame when it is one of pktgen's: Ethernet
// (one 802.1Q tag or none) carrying an unfragmented IPv4 datagram
// carrying UDP whose data starts with the magic. Whatever else arrives
// (ARP, a reflector's own traffic, a truncated or malformed frame) is
// foreign. Checksums are not verified: a reflector may rewrite headers,
// and the stamp is all pktgen measures. It allocates nothing.
func stampOf(frame []byte) (stamp, bool) {
	f, err := ether.Check(frame)
	if err != nil || f.EtherType() != ether.TypeIPv4 {
		return nil, false
	}
	ip, err := ipv4.Check(f.Payload())
	if err != nil || ip.Protocol() != ipv4.ProtoUDP || ip.IsFragment() {
		return nil, false
	}
	u, err := udp.Check(ip.Payload())
	if err != nil {
		return nil, false
	}
	s := stamp(u.Payload())
	return s, s.valid()
}
