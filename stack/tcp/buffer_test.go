package tcp

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("byte ring", func() {
	It("starts small and grows only as far as the stream needs", func() {
		r := newRing(1 << 20)
		Expect(r.write([]byte("hi"))).To(Equal(2))
		Expect(len(r.buf)).To(Equal(ringInitial))
		Expect(r.write(make([]byte, 5000))).To(Equal(5000))
		Expect(len(r.buf)).To(BeNumerically(">=", 5002))
		Expect(len(r.buf)).To(BeNumerically("<", 16<<10))
	})

	It("rewinds an emptied buffer to the start of its memory and keeps the stream", func() {
		r := newRing(64 << 10)
		r.write([]byte("abcdef"))
		p := make([]byte, 4)
		Expect(r.read(p)).To(Equal(4))
		r.rewind() // not empty: no effect
		Expect(r.head).To(Equal(4))
		Expect(r.read(p)).To(Equal(2))
		Expect(string(p[:2])).To(Equal("ef"))
		r.rewind()
		Expect(r.head).To(BeZero())
		r.write([]byte("xyz"))
		Expect(r.read(p)).To(Equal(3))
		Expect(string(p[:3])).To(Equal("xyz"))
	})

	It("frees its memory on release and works again afterwards", func() {
		r := newRing(64 << 10)
		r.write([]byte("abc"))
		r.read(make([]byte, 3))
		r.release()
		Expect(r.buf).To(BeNil())
		Expect(r.length()).To(BeZero())
		r.write([]byte("again"))
		p := make([]byte, 8)
		Expect(string(p[:r.read(p)])).To(Equal("again"))
	})
})
