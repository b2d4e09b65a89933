package icmpv6_test

import (
	"github.com/savanna-sim/savanna/stack/ipv6"
)

var (
	me    = ipv6.Addr{0: 0xfd, 15: 1}
	peer  = ipv6.Addr{0: 0xfd, 15: 2}
	group = ipv6.Addr{0: 0xff, 1: 0x02, 15: 1}
)

// packet builds an IPv6 packet from s to d carrying proto and upper.
func packet(s, d ipv6.Addr, proto uint8, upper []byte) []byte {
	b := make([]byte, ipv6.HeaderLen+len(upper))
	ipv6.Repr{Src: s, Dst: d, NextHeader: proto, PayloadLen: len(upper), HopLimit: 64}.Emit(ipv6.Packet(b))
	copy(b[ipv6.HeaderLen:], upper)
	return b
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + 1)
	}
	return b
}
