package inflate_test

import (
	"bytes"
	stdflate "compress/flate"
	"errors"
	"io"
	"math/rand/v2"

	"github.com/klauspost/compress/flate"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/inflate"
)

// sample makes compressible text-like data of n bytes.
func sample(r *rand.Rand, n int) []byte {
	words := []string{"savanna ", "gazelle ", "qat ", "deflate ", "tengine\n", "{\"k\":1} ", "<p>x</p>"}
	var b bytes.Buffer
	for b.Len() < n {
		if r.IntN(10) == 0 {
			b.WriteByte(byte(r.UintN(256)))
			continue
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

func compress(data []byte, level int, flushEvery int) []byte {
	var out bytes.Buffer
	w, err := flate.NewWriter(&out, level)
	Expect(err).NotTo(HaveOccurred())
	for len(data) > 0 {
		n := len(data)
		if flushEvery > 0 {
			n = min(n, flushEvery)
		}
		_, _ = w.Write(data[:n])
		data = data[n:]
		if flushEvery > 0 {
			Expect(w.Flush()).To(Succeed())
		}
	}
	Expect(w.Close()).To(Succeed())
	return out.Bytes()
}

// decodePieces feeds src in pieces of random size into dst windows of
// random size and returns the output and the bytes after the stream.
func decodePieces(r *rand.Rand, src []byte, maxIn, maxOut int) ([]byte, []byte, error) {
	var z inflate.Decoder
	z.Reset()
	var out []byte
	buf := make([]byte, maxOut)
	for i := 0; i < 1<<24; i++ {
		in := src[:min(len(src), 1+r.IntN(maxIn))]
		dst := buf[:1+r.IntN(maxOut)]
		nd, ns, err := z.Decode(dst, in)
		out = append(out, dst[:nd]...)
		src = src[ns:]
		if err != nil {
			return out, nil, err
		}
		if z.Done() {
			return out, append(append([]byte{}, z.Rest()...), src...), nil
		}
		if len(src) == 0 && nd == 0 {
			return out, nil, io.ErrUnexpectedEOF
		}
	}
	return out, nil, errors.New("no progress")
}

var _ = Describe("Decoder", func() {
	DescribeTable("decodes what klauspost/compress writes, in pieces of any size",
		func(level, size, flushEvery, maxIn, maxOut int) {
			r := rand.New(rand.NewPCG(uint64(level), uint64(size)))
			data := sample(r, size)
			comp := compress(data, level, flushEvery)
			trailer := []byte{1, 2, 3, 4, 5, 6, 7, 8}
			out, rest, err := decodePieces(r, append(comp, trailer...), maxIn, maxOut)
			Expect(err).NotTo(HaveOccurred())
			Expect(bytes.Equal(out, data)).To(BeTrue())
			Expect(rest).To(Equal(trailer))
		},
		Entry("stored, one byte at a time", 0, 70000, 0, 1, 7),
		Entry("fast level, small pieces", 1, 100000, 0, 3, 5),
		Entry("best level, big pieces", 9, 300000, 0, 65536, 65536),
		Entry("huffman only", flate.HuffmanOnly, 50000, 0, 100, 1000),
		Entry("sync flushes every 1000 bytes", 6, 50000, 1000, 17, 333),
		Entry("empty input", 6, 0, 0, 1, 1),
		Entry("one byte", 6, 1, 0, 1, 1),
	)

	It("decodes a fixed-Huffman stream from compress/flate", func() {
		var out bytes.Buffer
		w, _ := stdflate.NewWriter(&out, stdflate.BestSpeed)
		_, _ = w.Write([]byte("hello hello hello hello"))
		_ = w.Close()
		r := rand.New(rand.NewPCG(1, 2))
		got, _, err := decodePieces(r, out.Bytes(), 2, 2)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(got)).To(Equal("hello hello hello hello"))
	})

	DescribeTable("rejects corrupt streams with ErrCorrupt",
		func(src []byte) {
			var z inflate.Decoder
			_, _, err := z.Decode(make([]byte, 100), src)
			Expect(err).To(MatchError(inflate.ErrCorrupt))
			_, _, err2 := z.Decode(make([]byte, 100), src)
			Expect(err2).To(Equal(err), "errors are sticky")
		},
		Entry("block type 3", []byte{0x07}),
		Entry("stored length mismatch", []byte{0x01, 0x05, 0x00, 0x00, 0x00}),
		Entry("distance too far back", []byte{0x63, 0x00, 0x42, 0x00}),
		Entry("dynamic counts too large", []byte{0xfd, 0xff, 0xff, 0xff}),
	)

	// zlib itself sets BFINAL on the last data block (Go's writers end
	// with an empty final stored block instead): a final block's header
	// split across calls must not end the stream early. Found by sim/qat's
	// FuzzInflate (seed fbab04f43516aa5e).
	It("decodes a final dynamic block whose header arrives in pieces", func() {
		data := sample(rand.New(rand.NewPCG(9, 10)), 30000)
		var b bytes.Buffer
		w, err := flate.NewWriter(&b, 6)
		Expect(err).NotTo(HaveOccurred())
		_, _ = w.Write(data)
		Expect(w.Flush()).To(Succeed()) // one dynamic block, not final
		comp := b.Bytes()
		Expect(comp[0]>>1&3).To(BeEquivalentTo(2), "a dynamic block")
		comp[0] |= 1 // make it the final block, as zlib writes it
		want, err := io.ReadAll(stdflate.NewReader(bytes.NewReader(comp)))
		Expect(err).NotTo(HaveOccurred())
		Expect(want).To(Equal(data))
		for _, piece := range []int{1, 2, 7, 64} {
			out, _, err := decodePieces(rand.New(rand.NewPCG(uint64(piece), 1)), comp, piece, 1000)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(Equal(data), "pieces of up to %d bytes", piece)
		}
	})

	It("does not end a stream whose final stored block's header is cut short", func() {
		var z inflate.Decoder
		dst := make([]byte, 10)
		for _, b := range []byte{0x31, 0x30} { // BFINAL, stored, then 1 of 4 length bytes
			_, ns, err := z.Decode(dst, []byte{b})
			Expect(err).NotTo(HaveOccurred())
			Expect(ns).To(Equal(1))
			Expect(z.Done()).To(BeFalse())
			Expect(z.Status()).To(Equal(inflate.NeedInput))
		}
	})

	It("keeps a partial step for the next call and consumes all input", func() {
		comp := compress([]byte("abcdefghijabcdefghij"), 6, 0)
		var z inflate.Decoder
		dst := make([]byte, 64)
		nd, ns, err := z.Decode(dst, comp[:1])
		Expect(err).NotTo(HaveOccurred())
		Expect(ns).To(Equal(1))
		Expect(nd).To(Equal(0))
		nd, ns, err = z.Decode(dst, comp[1:])
		Expect(err).NotTo(HaveOccurred())
		Expect(ns).To(Equal(len(comp) - 1))
		Expect(string(dst[:nd])).To(Equal("abcdefghijabcdefghij"))
		Expect(z.Done()).To(BeTrue())
	})
})
