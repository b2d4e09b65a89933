package ipv6

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("sipHash24, the flow label's keyed hash", func() {
	// The reference implementation's vectors (Aumasson and Bernstein,
	// "SipHash: a fast short-input PRF", appendix A, and vectors.h of
	// github.com/veorq/SipHash): key 00 01 .. 0f, message the first n
	// bytes of 00 01 02 ...; every length class of the last block.
	DescribeTable("matches the reference vectors", func(n int, want uint64) {
		var key [16]byte
		msg := make([]byte, 64)
		for k := range key {
			key[k] = byte(k)
		}
		for k := range msg {
			msg[k] = byte(k)
		}
		k0, k1 := binary.LittleEndian.Uint64(key[0:8]), binary.LittleEndian.Uint64(key[8:16])
		Expect(sipHash24(k0, k1, msg[:n])).To(Equal(want))
	},
		Entry("empty", 0, uint64(0x726fdb47dd0e0e31)),
		Entry("1 byte", 1, uint64(0x74f839c593dc67fd)),
		Entry("7 bytes", 7, uint64(0xab0200f58b01d137)),
		Entry("8 bytes", 8, uint64(0x93f5f5799a932462)),
		Entry("15 bytes (the paper's example)", 15, uint64(0xa129ca6149be45e5)),
		Entry("16 bytes", 16, uint64(0x3f2acc7f57c29bdb)),
		Entry("19 bytes", 19, uint64(0xbb6dc91da77961bd)),
		Entry("63 bytes", 63, uint64(0x958a324ceb064572)),
	)
})
