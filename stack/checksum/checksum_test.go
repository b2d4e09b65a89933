package checksum_test

import (
	"encoding/binary"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/checksum"
)

var _ = Describe("the Internet checksum", func() {
	It("gives RFC 1071's worked example", func() {
		// RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
		b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
		Expect(checksum.Fold(checksum.Add(0, b))).To(Equal(uint16(0xddf2)))
		Expect(checksum.Checksum(b)).To(Equal(uint16(^uint16(0xddf2))))
	})

	It("verifies to zero over data that carries its checksum, odd lengths included", func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for n := 2; n < 200; n++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			b[0], b[1] = 0, 0
			binary.BigEndian.PutUint16(b, checksum.Checksum(b))
			Expect(checksum.Fold(checksum.Add(0, b))).To(Equal(uint16(0xffff)), "length %d", n)
		}
	})

	It("updates incrementally as RFC 1624 says", func() {
		b := []byte{0x45, 0x00, 0x00, 0x54, 0x12, 0x34, 0x40, 0x00, 0x40, 0x01, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
		binary.BigEndian.PutUint16(b[10:], checksum.Checksum(b))
		old := binary.BigEndian.Uint16(b[8:]) // TTL and protocol
		b[8]--                                // a router decrements the TTL
		updated := checksum.Update(binary.BigEndian.Uint16(b[10:]), old, binary.BigEndian.Uint16(b[8:]))
		binary.BigEndian.PutUint16(b[10:], 0)
		Expect(updated).To(Equal(checksum.Checksum(b)))
	})

	It("sums the IPv4 pseudo-header as RFC 768 and RFC 9293 define it", func() {
		got := checksum.PseudoHeaderV4([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 6, 20)
		Expect(checksum.Fold(got)).To(Equal(uint16(0x0a00 + 0x0001 + 0x0a00 + 0x0002 + 6 + 20)))
	})
})

// reference is RFC 1071's sum, 16 bits at a time, as the package computed
// it before the wide loop.
func reference(sum uint64, b []byte) uint64 {
	for len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

var _ = Describe("the wide summing loop", func() {
	DescribeTable("folds to what 16-bit words sum to",
		func(fill func(i int, rng *rand.Rand) byte) {
			rng := rand.New(rand.NewPCG(3, 4))
			for n := 0; n < 600; n++ {
				b := make([]byte, n)
				for i := range b {
					b[i] = fill(i, rng)
				}
				for _, start := range []uint64{0, 1, 0xffff, 0x1fffe, 0x3c8a5} {
					Expect(checksum.Fold(checksum.Add(start, b))).To(Equal(checksum.Fold(reference(start, b))),
						"length %d start %#x", n, start)
				}
			}
		},
		Entry("random bytes", func(_ int, rng *rand.Rand) byte { return byte(rng.IntN(256)) }),
		Entry("all zero", func(int, *rand.Rand) byte { return 0 }),
		Entry("all ones (carries everywhere)", func(int, *rand.Rand) byte { return 0xff }),
		Entry("alternating", func(i int, _ *rand.Rand) byte { return byte(0xff * (i & 1)) }),
	)
})
