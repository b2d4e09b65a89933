package qat

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
)

// memoOp is a stateless dynamic-Huffman compression op with room dst.
func memoOp(src []byte, level int, flush hw.FlushFlag, wl, dst int) *hw.CompOp {
	return &hw.CompOp{Type: hw.OpStateless, Flush: flush, Src: src, Dst: make([]byte, dst),
		Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: level, Huffman: hw.HuffmanDynamic, WindowLog: wl}}
}

// memoPage is a compressible page that differs by i.
func memoPage(i, n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "<tr><td>row %d of page %d</td></tr>\n", b.Len()%977, i)
	}
	return b.Bytes()[:n]
}

var _ = Describe("the codec's deflate memo", func() {
	It("gives a repeated op the bytes a fresh codec compresses, from the memo", func() {
		for _, flush := range []hw.FlushFlag{hw.FlushFinal, hw.FlushSync, hw.FlushFull} {
			for _, wl := range []int{0, 12} {
				for _, level := range []int{1, 6, 9} {
					src := memoPage(level, 20000)
					c := newCodec()
					first := memoOp(src, level, flush, wl, 40000)
					c.compress(first, Gen4)
					Expect(first.Status).To(Equal(hw.StatusSuccess))
					again := memoOp(src, level, flush, wl, 40000)
					hits := c.memo.hits
					c.compress(again, Gen4)
					Expect(c.memo.hits).To(Equal(hits + 1))
					Expect(again.Produced).To(Equal(first.Produced))
					Expect(again.Dst[:again.Produced]).To(Equal(first.Dst[:first.Produced]))
					Expect(again.Checksum).To(Equal(first.Checksum))
				}
			}
		}
	})

	It("keys on the settings: another level or flush is compressed, not copied", func() {
		c := newCodec()
		src := memoPage(1, 20000)
		c.compress(memoOp(src, 1, hw.FlushFinal, 0, 40000), Gen4)
		c.compress(memoOp(src, 9, hw.FlushFinal, 0, 40000), Gen4)
		c.compress(memoOp(src, 1, hw.FlushSync, 0, 40000), Gen4)
		c.compress(memoOp(src[:19999], 1, hw.FlushFinal, 0, 40000), Gen4)
		Expect(c.memo.hits).To(BeZero())
	})

	It("fails a remembered op whose destination is too small, as compressing it does", func() {
		src := memoPage(3, 20000)
		fresh := newCodec()
		want := memoOp(src, 6, hw.FlushFinal, 0, 100)
		fresh.compress(want, Gen4)
		Expect(want.Status).To(Equal(hw.StatusOutOfSpaceTerminated))

		c := newCodec()
		c.compress(memoOp(src, 6, hw.FlushFinal, 0, 40000), Gen4)
		got := memoOp(src, 6, hw.FlushFinal, 0, 100)
		c.compress(got, Gen4)
		Expect(c.memo.hits).To(Equal(uint64(1)))
		Expect(got.Status).To(Equal(want.Status))
		Expect(got.Debug).To(Equal(want.Debug))
		Expect(got.Produced).To(BeZero())
	})

	It("stays within its bounds over many distinct inputs", func() {
		c := newCodec()
		for i := range 3000 {
			c.compress(memoOp(memoPage(i, 8000), 6, hw.FlushFinal, 0, 16000), Gen4)
			Expect(c.memo.bytes).To(BeNumerically("<=", memoMaxBytes))
			Expect(len(c.memo.entries)).To(BeNumerically("<=", memoMaxEntries))
			Expect(len(c.memo.order)).To(Equal(len(c.memo.entries)))
		}
		// Incompressible inputs reach the byte bound before the count.
		rnd := rand.New(rand.NewPCG(1, 2))
		for range 100 {
			src := make([]byte, 64<<10)
			for j := range src {
				src[j] = byte(rnd.Uint32())
			}
			c.compress(memoOp(src, 6, hw.FlushFinal, 0, 80<<10), Gen4)
			Expect(c.memo.bytes).To(BeNumerically("<=", memoMaxBytes))
		}
		Expect(c.memo.bytes).To(BeNumerically(">", memoMaxBytes-(80<<10)))
		sum := 0
		for _, out := range c.memo.entries {
			sum += len(out)
		}
		Expect(sum).To(Equal(c.memo.bytes))
	})
})
