package nic

import (
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/rss"
)

// ToeplitzHash is the Toeplitz hash of input under key as the Microsoft
// RSS specification defines it (rss.Toeplitz, the bit loop), for the
// tests' verification vectors. Input is source address, destination
// address, then source and destination port, in network byte order.
func ToeplitzHash(key, input []byte) uint32 { return rss.Toeplitz(key, input) }

// ToeplitzTableHash exposes the precomputed-table hash the ports use to
// the tests, which check it against ToeplitzHash.
func ToeplitzTableHash(key, input []byte) uint32 { return rss.NewTable(key).Hash(input) }

// RSSHash classifies frame and returns its RSS hash under key and the
// enabled hash types, and whether a type matched, by the port's own
// classifier and hash input (rssInput) but the bit-loop hash: the tests
// check the port's hashes against it, and fuzz it never to panic.
func RSSHash(key, frame []byte, types hw.RSSHashType) (uint32, bool) {
	var f FrameInfo
	Classify(frame, &f)
	var t RSSTuple
	if !rssInput(&f, types, &t) {
		return 0, false
	}
	return ToeplitzHash(key, t.Bytes()), true
}
