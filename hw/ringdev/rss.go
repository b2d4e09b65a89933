package ringdev

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/hw"
)

// DefaultRSSKey returns Microsoft's published default Toeplitz key
// ("Verifying the RSS Hash Calculation"), which NIC drivers and DPDK use
// by default. A fresh copy each call.
func DefaultRSSKey() []byte {
	return []byte{
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
		0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
		0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
		0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
		0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	}
}

// ToeplitzHash is the Toeplitz hash of the Microsoft RSS specification:
// for every set bit of input, most significant first, the 32-bit window of
// key starting at that bit is XORed into the result. Key bits past its end
// count as zero.
func ToeplitzHash(key, input []byte) uint32 {
	var h uint32
	for i, b := range input {
		for bit := 0; bit < 8; bit++ {
			if b&(0x80>>bit) == 0 {
				continue
			}
			pos := i*8 + bit
			var w uint64
			for k := 0; k < 5; k++ {
				w <<= 8
				if j := pos/8 + k; j < len(key) {
					w |= uint64(key[j])
				}
			}
			h ^= uint32(w >> (8 - pos%8))
		}
	}
	return h
}

// flowHash returns the RSS hash of an Ethernet frame under types and key,
// and false when the frame is not hashable (not IPv4, or its type is not
// enabled): such frames go to queue 0 as on Intel NICs.
func flowHash(frame []byte, types hw.RSSHashType, key []byte) (uint32, bool) {
	if len(frame) < 14+20 || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
		return 0, false
	}
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl {
		return 0, false
	}
	var in [12]byte
	copy(in[0:8], ip[12:20])
	fragmented := binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0
	if ip[9] == 6 && !fragmented && types&hw.RSSIPv4TCP != 0 && len(ip) >= ihl+4 {
		copy(in[8:12], ip[ihl:ihl+4])
		return ToeplitzHash(key, in[:12]), true
	}
	if types&hw.RSSIPv4 != 0 {
		return ToeplitzHash(key, in[:8]), true
	}
	return 0, false
}
