package adler_test

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/adler"
)

func TestAdler(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "adler Suite")
}

var _ = Describe("a seeded Adler-32", func() {
	It("equals hash/adler32 over the whole, however the data is split", func() {
		rng := rand.New(rand.NewPCG(3, 4))
		data := make([]byte, 100_000)
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		for _, cut := range []int{0, 1, 3, 5551, 5552, 5553, 65536, len(data)} {
			got := adler.Update(adler.Update(1, data[:cut]), data[cut:])
			Expect(got).To(Equal(adler32.Checksum(data)), "cut at %d", cut)
		}
	})
})
