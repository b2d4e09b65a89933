package nic

import (
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
)

// RSSKeyLen is the length of the standard Toeplitz key (40 bytes, enough
// for an IPv6 4-tuple of 36 bytes plus the 4-byte window).
const RSSKeyLen = rss.KeyLen

// MicrosoftRSSKey returns the default Toeplitz key published by Microsoft
// in "Verifying the RSS Hash Calculation" (see rss.MicrosoftKey): a fresh
// copy each call.
func MicrosoftRSSKey() []byte { return rss.MicrosoftKey() }

// RSSTuple is the input of the RSS hash for one packet, built without
// allocation (rss.Tuple).
type RSSTuple = rss.Tuple

// rssInput fills t with the hash input for the classified frame f under
// the enabled hash types, by the most specific enabled type that matches
// (a TCP/IPv4 packet hashes its 4-tuple when RSSIPv4TCP is on, else its
// addresses when RSSIPv4 is on). It reports false when no enabled type
// matches: the NIC then puts the packet on queue 0 without a hash, as
// Intel NICs do for packet types outside the enabled set.
func rssInput(f *FrameInfo, types hw.RSSHashType, t *RSSTuple) bool {
	t.Reset()
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
	t.Set(f.Src[:alen], f.Dst[:alen], ports, f.SrcPort, f.DstPort)
	return true
}

// DefaultRETA fills reta round-robin over queues, as drivers do at
// configure time (see rss.DefaultRETA).
func DefaultRETA(reta []uint16, queues int) { rss.DefaultRETA(reta, queues) }

// RETAQueue returns the queue a hash maps to through reta,
// reta[hash % len(reta)] (see rss.RETAQueue).
func RETAQueue(reta []uint16, hash uint32) uint16 { return rss.RETAQueue(reta, hash) }
