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

// flowHash returns the RSS hash of an Ethernet frame under types and the
// key whose table is t,
// and false when the frame is not hashable (not IPv4, or its type is not
// enabled): such frames go to queue 0 as on Intel NICs.
func flowHash(frame []byte, types hw.RSSHashType, t *rss.Table) (uint32, bool) {
	if len(frame) < 14+20 || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
		return 0, false
	}
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl {
		return 0, false
	}
	src, dst := [4]byte(ip[12:16]), [4]byte(ip[16:20])
	fragmented := binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0
	if ip[9] == 6 && !fragmented && types&hw.RSSIPv4TCP != 0 && len(ip) >= ihl+4 {
		l4 := ip[ihl:]
		in := rss.IPv4Input(src, dst, binary.BigEndian.Uint16(l4[0:2]), binary.BigEndian.Uint16(l4[2:4]))
		return t.Hash(in[:]), true
	}
	if types&hw.RSSIPv4 != 0 {
		in := rss.IPv4Input(src, dst, 0, 0)
		return t.Hash(in[:8]), true
	}
	return 0, false
}
