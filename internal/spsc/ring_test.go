package spsc_test

import (
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/spsc"
)

var _ = Describe("SPSC ring", func() {
	DescribeTable("rejects sizes that are not powers of two",
		func(n int) {
			_, err := spsc.New[int](n)
			Expect(err).To(MatchError(ContainSubstring("power of two")))
		},
		Entry("zero", 0),
		Entry("negative", -4),
		Entry("three", 3),
		Entry("1000", 1000),
	)

	It("fills to its size, refuses more, and returns entries in order", func() {
		r, err := spsc.New[int](4)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Cap()).To(Equal(4))
		for i := 1; i <= 4; i++ {
			Expect(r.Enqueue(i)).To(BeTrue())
		}
		Expect(r.Enqueue(5)).To(BeFalse())
		Expect(r.Count()).To(Equal(4))
		dst := make([]int, 3)
		Expect(r.DequeueBurst(dst)).To(Equal(3))
		Expect(dst).To(Equal([]int{1, 2, 3}))
		// Wrap around the end of the slot array.
		Expect(r.Enqueue(6)).To(BeTrue())
		Expect(r.Enqueue(7)).To(BeTrue())
		Expect(r.DequeueBurst(dst)).To(Equal(3))
		Expect(dst).To(Equal([]int{4, 6, 7}))
		Expect(r.DequeueBurst(dst)).To(Equal(0))
		Expect(r.Count()).To(Equal(0))
	})

	It("drops its references to dequeued entries", func() {
		r, _ := spsc.New[*int](2)
		v := 7
		r.Enqueue(&v)
		dst := make([]*int, 1)
		Expect(r.DequeueBurst(dst)).To(Equal(1))
		Expect(dst[0]).To(Equal(&v))
		// The slot is empty again: a fresh enqueue/dequeue cycle through
		// every slot hands back only what was put in.
		r.Enqueue(nil)
		r.Enqueue(nil)
		Expect(r.DequeueBurst(make([]*int, 2))).To(Equal(2))
	})

	It("passes every entry once and in order from a producer goroutine to a consumer goroutine", func() {
		// Run under -race: the atomics must order the slot accesses.
		const total = 20000
		r, err := spsc.New[uint64](64)
		Expect(err).NotTo(HaveOccurred())
		done := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(done)
			for i := uint64(0); i < total; {
				if r.Enqueue(i) {
					i++
				} else {
					runtime.Gosched() // full: let the consumer run
				}
			}
		}()
		next := uint64(0)
		buf := make([]uint64, 16)
		for next < total {
			n := r.DequeueBurst(buf)
			if n == 0 {
				runtime.Gosched() // empty: let the producer run
			}
			for _, v := range buf[:n] {
				if v != next {
					Fail("out of order")
				}
				next++
			}
		}
		<-done
		Expect(next).To(Equal(uint64(total)))
		Expect(r.Count()).To(Equal(0))
	})
})
