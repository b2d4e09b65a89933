package nic

import (
	"encoding/binary"
	"math/bits"

	"github.com/savanna-sim/savanna/hw"
)

// RSSKeyLen is the length of the standard Toeplitz key (40 bytes, enough
// for an IPv6 4-tuple of 36 bytes plus the 4-byte window).
const RSSKeyLen = 40

// MicrosoftRSSKey returns the default Toeplitz key published by Microsoft
// in "Verifying the RSS Hash Calculation" (Windows driver documentation),
// the key real NIC drivers and DPDK's test_thash use by default. It
// returns a fresh copy so callers cannot change the default.
func MicrosoftRSSKey() []byte {
	return []byte{
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2,
		0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
		0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4,
		0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
		0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	}
}

// ToeplitzHash computes the Toeplitz hash of input under key as the
// Microsoft RSS specification defines it: for every bit of input that is
// set, from the most significant bit of input[0] on, the 32-bit window of
// the key starting at that bit position is XORed into the result. Input
// is the bytes in the order the RSS specification gives: source address,
// destination address, then source port and destination port, all in
// network byte order.
//
// The key must hold at least len(input)+4 bytes; key bits past its end
// are taken as zero (so a short key never panics, it just hashes
// differently). The function does not allocate.
func ToeplitzHash(key, input []byte) uint32 {
	// k holds the 64 key bits starting at the current input byte's
	// first bit; the window for bit j of the byte (0 = most
	// significant) is then bits j..j+31 of k from the top.
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(key) {
			k |= uint64(key[i])
		}
	}
	var result uint32
	for i, b := range input {
		// Visit only the set bits, most significant first.
		for b != 0 {
			j := bits.LeadingZeros8(b)
			result ^= uint32(k >> (32 - j))
			b &^= 0x80 >> j
		}
		k <<= 8
		if i+8 < len(key) {
			k |= uint64(key[i+8])
		}
	}
	return result
}

// toeplitzTable is the Toeplitz hash of one key precomputed per input
// byte position and value, as NIC drivers' software RSS and DPDK's
// rte_thash do to avoid the bit loop: the hash of an input is the XOR of
// one entry per byte. It covers inputs up to an IPv6 4-tuple.
type toeplitzTable [36][256]uint32

// newToeplitzTable precomputes key's table.
func newToeplitzTable(key []byte) *toeplitzTable {
	t := new(toeplitzTable)
	var one [36]byte
	for i := range t {
		for bit := 0; bit < 8; bit++ {
			one[i] = 0x80 >> bit
			h := ToeplitzHash(key, one[:i+1])
			one[i] = 0
			// Entries for every value with this bit set get h.
			for v := 0; v < 256; v++ {
				if v&(0x80>>bit) != 0 {
					t[i][v] ^= h
				}
			}
		}
	}
	return t
}

// hash returns the Toeplitz hash of input (at most 36 bytes).
func (t *toeplitzTable) hash(input []byte) uint32 {
	var h uint32
	for i, b := range input[:min(len(input), len(t))] {
		h ^= t[i][b]
	}
	return h
}

// RSSTuple is the input of the RSS hash for one packet, built without
// allocation: Bytes returns the part in use.
type RSSTuple struct {
	buf [36]byte
	n   int
}

// Bytes returns the hash input.
func (t *RSSTuple) Bytes() []byte { return t.buf[:t.n] }

// rssInput fills t with the hash input for the classified frame f under
// the enabled hash types, by the most specific enabled type that matches
// (a TCP/IPv4 packet hashes its 4-tuple when RSSIPv4TCP is on, else its
// addresses when RSSIPv4 is on). It reports false when no enabled type
// matches: the NIC then puts the packet on queue 0 without a hash, as
// Intel NICs do for packet types outside the enabled set.
func rssInput(f *FrameInfo, types hw.RSSHashType, t *RSSTuple) bool {
	t.n = 0
	var ipType, tcpType, udpType hw.RSSHashType
	switch f.L3 {
	case L3IPv4:
		ipType, tcpType, udpType = hw.RSSIPv4, hw.RSSIPv4TCP, hw.RSSIPv4UDP
	case L3IPv6:
		ipType, tcpType, udpType = hw.RSSIPv6, hw.RSSIPv6TCP, hw.RSSIPv6UDP
	default:
		return false
	}
	ports := false
	switch {
	case f.L4 == L4TCP && types&tcpType != 0:
		ports = true
	case f.L4 == L4UDP && types&udpType != 0:
		ports = true
	case types&ipType != 0:
	default:
		return false
	}
	alen := 4
	if f.L3 == L3IPv6 {
		alen = 16
	}
	n := copy(t.buf[:], f.Src[:alen])
	n += copy(t.buf[n:], f.Dst[:alen])
	if ports {
		binary.BigEndian.PutUint16(t.buf[n:], f.SrcPort)
		binary.BigEndian.PutUint16(t.buf[n+2:], f.DstPort)
		n += 4
	}
	t.n = n
	return true
}

// RSSHash classifies frame and returns its RSS hash under key and the
// enabled hash types, and whether a type matched. It never panics, on any
// bytes, and does not allocate.
func RSSHash(key, frame []byte, types hw.RSSHashType) (uint32, bool) {
	var f FrameInfo
	Classify(frame, &f)
	var t RSSTuple
	if !rssInput(&f, types, &t) {
		return 0, false
	}
	return ToeplitzHash(key, t.Bytes()), true
}

// DefaultRETA fills reta round-robin over queues, as drivers do at
// configure time (entry i goes to queue i % queues).
func DefaultRETA(reta []uint16, queues int) {
	if queues <= 0 {
		queues = 1
	}
	for i := range reta {
		reta[i] = uint16(i % queues)
	}
}

// RETAQueue returns the queue a hash maps to through reta:
// reta[hash % len(reta)], as the NIC indexes its redirection table by the
// low bits of the hash (RETA sizes are powers of two, so the modulo is
// those bits).
func RETAQueue(reta []uint16, hash uint32) uint16 {
	if len(reta) == 0 {
		return 0
	}
	return reta[hash%uint32(len(reta))]
}
