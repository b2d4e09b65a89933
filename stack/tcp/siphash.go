package tcp

import "github.com/savanna-sim/savanna/stack/internal/siphash"

// sipKey is a 128-bit SipHash key drawn from the stack's random stream.
type sipKey [2]uint64

// sipHash24 is SipHash-2-4 over an input of whole 64-bit words (six at
// most here: an IPv6 4-tuple and a SYN cookie's word), the keyed
// pseudo-random function RFC 6528 section 3 asks for (it suggests MD5;
// any PRF with a secret key will do, and Linux uses SipHash too).
func sipHash24(k sipKey, m []uint64) uint64 { return siphash.Sum64Words(k[0], k[1], m) }
