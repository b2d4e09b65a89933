package siphash_test

import (
	"encoding/binary"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/internal/siphash"
)

var _ = Describe("SipHash-2-4", func() {
	var k0, k1 uint64
	msg := make([]byte, 64)
	BeforeEach(func() {
		var key [16]byte
		for k := range key {
			key[k] = byte(k)
		}
		for k := range msg {
			msg[k] = byte(k)
		}
		k0, k1 = binary.LittleEndian.Uint64(key[0:8]), binary.LittleEndian.Uint64(key[8:16])
	})

	// The reference implementation's vectors (the paper's appendix A and
	// vectors.h of github.com/veorq/SipHash): key 00 01 .. 0f, message
	// the first n bytes of 00 01 02 ...; every length class of the last
	// block.
	DescribeTable("matches the reference vectors", func(n int, want uint64) {
		Expect(siphash.Sum64(k0, k1, msg[:n])).To(Equal(want))
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

	It("hashes whole words as their little-endian bytes", func() {
		for n := 0; n <= 8; n++ {
			words := make([]uint64, n)
			for i := range words {
				words[i] = binary.LittleEndian.Uint64(msg[8*i:])
			}
			Expect(siphash.Sum64Words(k0, k1, words)).To(Equal(siphash.Sum64(k0, k1, msg[:8*n])), "%d words", n)
		}
	})
})
