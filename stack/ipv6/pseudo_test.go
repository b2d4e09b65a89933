package ipv6_test

import (
	"encoding/binary"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// pseudoOracle is RFC 8200 section 8.1's pseudo-header laid out as a
// 40-byte block and summed 16 bits at a time by checksum.Add.
func pseudoOracle(src, dst ipv6.Addr, length int, proto uint8) uint16 {
	var ph [40]byte
	copy(ph[0:16], src[:])
	copy(ph[16:32], dst[:])
	binary.BigEndian.PutUint32(ph[32:36], uint32(length))
	ph[39] = proto
	return checksum.Fold(checksum.Add(0, ph[:]))
}

var _ = Describe("PseudoHeaderSum's 32-bit words (RFC 8200 section 8.1, RFC 1071 section 2)", func() {
	It("folds to the 16-bit sum for random and extreme headers", func() {
		rng := rand.New(rand.NewPCG(21, 6))
		var ones ipv6.Addr
		for k := range ones {
			ones[k] = 0xff
		}
		cases := [][2]ipv6.Addr{{ones, ones}, {{}, {}}, {ones, {}}}
		for range 2000 {
			var s, d ipv6.Addr
			for k := range s {
				s[k], d[k] = byte(rng.Uint32()), byte(rng.Uint32())
			}
			cases = append(cases, [2]ipv6.Addr{s, d})
		}
		for k, c := range cases {
			length := []int{0, 20, 1448, 65535, 70000, 0xffffffff}[k%6]
			proto := []uint8{ipv6.NextTCP, ipv6.NextUDP, ipv6.NextICMPv6, 0, 0xff}[k%5]
			Expect(checksum.Fold(ipv6.PseudoHeaderSum(c[0], c[1], length, proto))).To(
				Equal(pseudoOracle(c[0], c[1], length, proto)), "case %d: %x %x %d %d", k, c[0], c[1], length, proto)
		}
	})
})
