package holes_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/internal/holes"
)

// frag is a fragment of data [off, off+n), the last one when !more.
type frag struct {
	off, n int
	more   bool
}

// feed checks and places each fragment in turn and returns the verdicts.
func feed(d *holes.Datagram, max int, fs ...frag) []holes.Verdict {
	var out []holes.Verdict
	for _, f := range fs {
		v, h := d.Check(f.off, f.n, f.more, max)
		if v == holes.Fits {
			d.Place(h, f.off, f.n, f.more)
		}
		out = append(out, v)
	}
	return out
}

var _ = Describe("a datagram's holes (RFC 815, RFC 5722)", func() {
	var d holes.Datagram
	BeforeEach(func() {
		d = holes.New(8)
		d.Reset(65535)
	})

	It("completes from fragments in any order, and only once the last arrived", func() {
		Expect(feed(&d, 8, frag{16, 8, true}, frag{0, 16, true})).To(Equal([]holes.Verdict{holes.Fits, holes.Fits}))
		Expect(d.Complete()).To(BeFalse(), "no last fragment yet")
		Expect(feed(&d, 8, frag{24, 4, false})).To(Equal([]holes.Verdict{holes.Fits}))
		Expect(d.Complete()).To(BeTrue())
		Expect(d.Total()).To(Equal(28))
		Expect(d.Bytes()).To(Equal(28))
		Expect(d.Fragments()).To(Equal(3))
	})

	It("keeps the hole in front of the last fragment open (RFC 815 step 6)", func() {
		feed(&d, 8, frag{16, 8, false})
		Expect(d.Complete()).To(BeFalse())
		Expect(d.Total()).To(Equal(24))
		feed(&d, 8, frag{0, 16, true})
		Expect(d.Complete()).To(BeTrue())
	})

	It("tells an exact duplicate from an overlap (RFC 5722 section 4)", func() {
		feed(&d, 8, frag{0, 16, true})
		Expect(feed(&d, 8, frag{0, 16, true})).To(Equal([]holes.Verdict{holes.Duplicate}))
		Expect(feed(&d, 8, frag{8, 16, true})).To(Equal([]holes.Verdict{holes.Overlap}), "straddles data held and a hole")
		Expect(feed(&d, 8, frag{0, 8, true})).To(Equal([]holes.Verdict{holes.Overlap}), "inside data held, not a duplicate")
		Expect(d.Bytes()).To(Equal(16), "nothing placed")
	})

	It("refuses fragments that disagree on where the datagram ends", func() {
		feed(&d, 8, frag{0, 16, true}, frag{16, 8, false})
		Expect(feed(&d, 8, frag{24, 8, true})).To(Equal([]holes.Verdict{holes.Inconsistent}), "data past the end")
		d.Reset(65535)
		feed(&d, 8, frag{16, 16, true})
		Expect(feed(&d, 8, frag{0, 8, false})).To(Equal([]holes.Verdict{holes.Inconsistent}), "an end before data held")
	})

	It("holds at most its limit of fragments", func() {
		Expect(feed(&d, 2, frag{0, 8, true}, frag{8, 8, true}, frag{16, 8, true})).
			To(Equal([]holes.Verdict{holes.Fits, holes.Fits, holes.TooMany}))
	})

	It("forgets its bytes and starts afresh on Reset, without allocating", func() {
		feed(&d, 8, frag{0, 8, true})
		d.Forget()
		Expect(d.Bytes()).To(BeZero())
		Expect(testingAllocs(func() {
			d.Reset(65535)
			feed1(&d, frag{0, 8, true})
			feed1(&d, frag{8, 8, false})
		})).To(BeZero())
		Expect(d.Complete()).To(BeTrue())
	})
})

// feed1 places one fragment without collecting verdicts (no allocation).
func feed1(d *holes.Datagram, f frag) {
	if v, h := d.Check(f.off, f.n, f.more, 8); v == holes.Fits {
		d.Place(h, f.off, f.n, f.more)
	}
}
