package inflate_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/flate"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/inflate"
)

// What the QAT model needs of the decoder beside what the shim uses: why
// a call stopped, a corruption reason without the package's prefix, the
// farthest match distance, and no allocation once warm.
var _ = Describe("Decoder for the QAT model", func() {
	It("says why each call stopped: need input, destination full, stream end", func() {
		r := rand.New(rand.NewPCG(3, 4))
		data := sample(r, 20000)
		src := compress(data, 6, 0)
		var z inflate.Decoder
		Expect(z.Status()).To(Equal(inflate.NeedInput), "the zero value")
		var out []byte
		buf := make([]byte, 13)
		seen := map[inflate.Status]int{}
		fullAndUsedUp := 0
		for range 1 << 20 {
			in := src[:min(len(src), 1+r.IntN(11))]
			dst := buf[:1+r.IntN(len(buf))]
			nd, ns, err := z.Decode(dst, in)
			Expect(err).NotTo(HaveOccurred())
			out = append(out, dst[:nd]...)
			src = src[ns:]
			seen[z.Status()]++
			switch z.Status() {
			case inflate.NeedInput:
				Expect(ns).To(Equal(len(in)), "need input: all of src taken in")
			case inflate.DstFull:
				Expect(nd).To(Equal(len(dst)), "destination full: every byte of dst written")
				if ns == len(in) {
					fullAndUsedUp++ // a match or stored run cut by dst, src all taken
				}
			case inflate.StreamEnd:
				Expect(z.Done()).To(BeTrue())
			default:
				Fail("unexpected status " + z.Status().String())
			}
			if z.Done() {
				break
			}
		}
		Expect(out).To(Equal(data))
		Expect(z.Status()).To(Equal(inflate.StreamEnd))
		Expect(seen[inflate.NeedInput]).To(BeNumerically(">", 0))
		Expect(seen[inflate.DstFull]).To(BeNumerically(">", 0))
		Expect(fullAndUsedUp).To(BeNumerically(">", 0))
		_, _, err := z.Decode(buf, []byte{1})
		Expect(err).NotTo(HaveOccurred())
		Expect(z.Status()).To(Equal(inflate.StreamEnd), "after the end it stays ended")
		z.Reset()
		Expect(z.Status()).To(Equal(inflate.NeedInput))
	})

	It("resumes a match cut by a full destination", func() {
		// "ab", then matches of distance 2 and length 258.
		data := bytes.Repeat([]byte("ab"), 200)
		src := compress(data, 9, 0)
		var z inflate.Decoder
		dst := make([]byte, 50)
		nd, ns, err := z.Decode(dst, src)
		Expect(err).NotTo(HaveOccurred())
		Expect(nd).To(Equal(50))
		Expect(z.Status()).To(Equal(inflate.DstFull))
		out := append([]byte(nil), dst[:nd]...)
		src = src[ns:]
		for !z.Done() {
			nd, ns, err = z.Decode(dst, src)
			Expect(err).NotTo(HaveOccurred())
			Expect(nd+ns).To(BeNumerically(">", 0), "progress at status %v", z.Status())
			out = append(out, dst[:nd]...)
			src = src[ns:]
		}
		Expect(out).To(Equal(data))
	})

	It("at the stream end gives back bytes past it, as unconsumed src or in Rest", func() {
		comp := compress([]byte("a short stream, then a trailer"), 6, 0)
		trailer := []byte{9, 8, 7, 6, 5, 4, 3, 2}
		var z inflate.Decoder
		dst := make([]byte, 100)
		_, ns, err := z.Decode(dst, append(append([]byte(nil), comp...), trailer...))
		Expect(err).NotTo(HaveOccurred())
		Expect(z.Status()).To(Equal(inflate.StreamEnd))
		Expect(ns - len(z.Rest())).To(Equal(len(comp)))
		Expect(append(append([]byte(nil), z.Rest()...), trailer[ns-len(comp):]...)).To(Equal(trailer))
	})

	DescribeTable("gives the reason for corruption alone, and wraps ErrCorrupt",
		func(src []byte, reason string) {
			var z inflate.Decoder
			_, _, err := z.Decode(make([]byte, 100), src)
			Expect(z.Status()).To(Equal(inflate.Corrupt))
			var ce *inflate.CorruptError
			Expect(errors.As(err, &ce)).To(BeTrue())
			Expect(ce.Reason).To(ContainSubstring(reason))
			Expect(ce.Reason).NotTo(ContainSubstring("corrupt deflate data"))
			Expect(err.Error()).To(Equal("inflate: corrupt deflate data: " + ce.Reason))
			Expect(err).To(MatchError(inflate.ErrCorrupt))
		},
		Entry("block type 3", []byte{0x07}, "block type"),
		Entry("stored length mismatch", []byte{0x01, 0x05, 0x00, 0x00, 0x00}, "complement"),
		Entry("distance too far back", []byte{0x03, 0x02, 0x00}, "too far back"),
	)

	It("records the farthest match distance of the stream", func() {
		var b bytes.Buffer
		w, err := flate.NewWriterWindow(&b, 512)
		Expect(err).NotTo(HaveOccurred())
		_, _ = w.Write(sample(rand.New(rand.NewPCG(5, 6)), 50000))
		Expect(w.Close()).To(Succeed())
		var z inflate.Decoder
		_, _, err = z.Decode(make([]byte, 60000), b.Bytes())
		Expect(err).NotTo(HaveOccurred())
		Expect(z.Done()).To(BeTrue())
		Expect(z.MaxDistance()).To(BeNumerically(">", 0))
		Expect(z.MaxDistance()).To(BeNumerically("<=", 512))
		z.Reset()
		Expect(z.MaxDistance()).To(BeZero())
	})

	It("decodes in small pieces without allocating once warm", func() {
		src := compress(sample(rand.New(rand.NewPCG(7, 8)), 100000), 6, 0)
		var z inflate.Decoder
		dst := make([]byte, 1<<16) // room enough that each piece runs out first
		allocs := testing.AllocsPerRun(3, func() {
			z.Reset()
			in := src
			for !z.Done() {
				_, ns, err := z.Decode(dst, in[:min(len(in), 1000)])
				if err != nil {
					Fail(err.Error())
				}
				in = in[ns:]
			}
		})
		Expect(allocs).To(BeZero())
	})
})
