package tcp

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("byte ring", func() {
	It("starts small and grows only as far as the stream needs", func() {
		r := newRing(1<<20, nil)
		Expect(r.write([]byte("hi"))).To(Equal(2))
		Expect(len(r.buf)).To(Equal(ringInitial))
		Expect(r.write(make([]byte, 5000))).To(Equal(5000))
		Expect(len(r.buf)).To(BeNumerically(">=", 5002))
		Expect(len(r.buf)).To(BeNumerically("<", 16<<10))
	})

	It("rewinds an emptied buffer to the start of its memory and keeps the stream", func() {
		r := newRing(64<<10, nil)
		r.write([]byte("abcdef"))
		p := make([]byte, 4)
		Expect(r.read(p)).To(Equal(4))
		r.rewind() // not empty: no effect
		Expect(r.head).To(Equal(int32(4)))
		Expect(r.read(p)).To(Equal(2))
		Expect(string(p[:2])).To(Equal("ef"))
		r.rewind()
		Expect(r.head).To(BeZero())
		r.write([]byte("xyz"))
		Expect(r.read(p)).To(Equal(3))
		Expect(string(p[:3])).To(Equal("xyz"))
	})

	It("frees its memory on release and works again afterwards", func() {
		r := newRing(64<<10, nil)
		r.write([]byte("abc"))
		r.read(make([]byte, 3))
		var sp spareRings
		r.release(&sp)
		Expect(r.buf).To(BeNil())
		Expect(sp.bufs).To(HaveLen(1))
		Expect(r.length()).To(BeZero())
		r.write([]byte("again"))
		p := make([]byte, 8)
		Expect(string(p[:r.read(p)])).To(Equal("again"))
	})

	It("lends emptied first-size buffers to the next writer and keeps grown ones", func() {
		var sp spareRings
		a, b := newRing(64<<10, nil), newRing(64<<10, nil)
		a.prime(&sp, 3)
		a.write([]byte("abc"))
		first := &a.buf[0]
		a.read(make([]byte, 3))
		a.recycle(&sp)
		Expect(a.buf).To(BeNil())
		Expect(sp.bufs).To(HaveLen(1))
		b.prime(&sp, 5)
		Expect(&b.buf[0]).To(BeIdenticalTo(first), "the buffer freed last is reused first")
		Expect(sp.bufs).To(BeEmpty())
		b.write([]byte("hello"))
		p := make([]byte, 8)
		Expect(string(p[:b.read(p)])).To(Equal("hello"))
		b.write(make([]byte, 1000)) // grows past the first size
		b.read(make([]byte, 1000))
		b.recycle(&sp)
		Expect(len(b.buf)).To(BeNumerically(">", ringInitial))
		Expect(sp.bufs).To(BeEmpty())
		for i := 0; i < maxSpareRings+10; i++ {
			sp.put(make([]byte, ringInitial))
		}
		Expect(sp.bufs).To(HaveLen(maxSpareRings))
	})
})
