package sockring_test

import (
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/sockring"
)

var _ = Describe("ring storage lent by a Storage", func() {
	It("is taken on the first write and given back when the ring is found drained", func() {
		st := &sockring.Storage{}
		r := sockring.NewStoredRing(1<<16, st)
		Expect(r.HasStorage()).To(BeFalse())
		Expect(r.Write([]byte("ping"), 0)).To(Equal(4))
		Expect(r.HasStorage()).To(BeTrue())
		buf := make([]byte, 2)
		Expect(r.Read(buf)).To(Equal(2))
		r.ReleaseDrained(true)
		r.ReleaseDrained(false)
		Expect(r.HasStorage()).To(BeTrue(), "two bytes still unread")
		Expect(r.Read(buf)).To(Equal(2))
		Expect(string(buf)).To(Equal("ng"))
		Expect(r.HasStorage()).To(BeTrue(), "kept between messages until the stack thread looks")
		r.ReleaseDrained(true)
		Expect(r.HasStorage()).To(BeFalse(), "drained: an idle ring holds no storage")
		s := st.Stats()
		Expect(s.Gets).To(Equal(uint64(1)))
		Expect(s.Puts).To(Equal(uint64(1)))
		Expect(s.SpareBytes).To(Equal(int64(sockring.MinStorage)))

		Expect(r.Write(make([]byte, 40), 0)).To(Equal(40))
		Expect(st.Stats().New).To(Equal(uint64(1)), "the spare was reused")
		Expect(r.Read(make([]byte, 64))).To(Equal(40))
		r.ReleaseDrained(false)
		Expect(r.HasStorage()).To(BeFalse(), "as the producer too")
		Expect(r.Write(make([]byte, 3000), 0)).To(Equal(3000), "a larger write gets a larger class")
		Expect(st.Stats().New).To(Equal(uint64(2)))
		Expect(r.Read(make([]byte, 4096))).To(Equal(3000))
		r.ReleaseDrained(true)
		Expect(r.HasStorage()).To(BeFalse())
		Expect(r.Write([]byte("x"), 0)).To(Equal(1))
		Expect(r.Space()).To(Equal(4096-1), "a ring that grew keeps its size, though not its memory, while idle")
	})

	DescribeTable("keeps the stream intact while a producer and a consumer on two goroutines lend and return it", func(consumerReleases bool) {
		st := &sockring.Storage{}
		r := sockring.NewStoredRing(4096, st)
		const total = 4 << 20
		rng := rand.New(rand.NewPCG(1, 2))
		src := make([]byte, total)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			prng := rand.New(rand.NewPCG(3, 4))
			for off := 0; off < total; {
				n := min(1+prng.IntN(3000), total-off)
				k := r.Write(src[off:off+n], 0)
				off += k
				if !consumerReleases {
					r.ReleaseDrained(false)
				}
				if k == 0 {
					runtime.Gosched()
				}
			}
		}()
		got := make([]byte, 0, total)
		buf := make([]byte, 5000)
		crng := rand.New(rand.NewPCG(5, 6))
		for spins := 0; len(got) < total && spins < 1<<26; spins++ {
			k := r.Read(buf[:1+crng.IntN(len(buf)-1)])
			got = append(got, buf[:k]...)
			if consumerReleases {
				r.ReleaseDrained(true)
			}
			if k == 0 {
				runtime.Gosched()
			}
		}
		wg.Wait()
		r.ReleaseDrained(true)
		Expect(len(got)).To(Equal(total))
		Expect(crc32.ChecksumIEEE(got)).To(Equal(crc32.ChecksumIEEE(src)), "every byte in order")
		Expect(r.HasStorage()).To(BeFalse())
		s := st.Stats()
		Expect(s.Puts).To(BeNumerically(">=", 1), "the drained ring's storage went back")
		Expect(s.Gets).To(BeNumerically("<=", s.Puts+1))
	},
		Entry("the consumer releasing it (a send ring)", true),
		Entry("the producer releasing it (a receive ring)", false))
})
