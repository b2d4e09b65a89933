//go:build dpdk

package dpdk_test

import (
	"bytes"
	"compress/flate"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/hw/hwtest"
)

// corpus is the conformance suite's compressible text, so that this
// file's specs and hw/hwtest's use the same inputs.
func corpus(n int, seed uint64) []byte { return hwtest.Corpus(n, seed) }

// run submits one operation and polls until it completes.
func run(d *dpdk.CompressDev, op *hw.CompOp) {
	Expect(d.EnqueueBurst(0, []*hw.CompOp{op})).To(Equal(1))
	out := make([]*hw.CompOp, 1)
	Eventually(func() int { return d.DequeueBurst(0, out) }).Should(Equal(1))
	Expect(out[0]).To(BeIdenticalTo(op))
}

// The round trips (0 B to 1 MiB, in mbuf chains above 64 KiB - 1, with
// every checksum the device computes), burst order, an output too large
// for its destination and corrupt input are hw/hwtest's conformance specs,
// which run on compress_zlib and compress_isal in hwtest_test.go. These
// are what only the DPDK backend does: its capabilities as the PMDs give
// them, the checks it makes before a PMD sees an operation, and its
// driver statistics.
var _ = Describe("CompressDev", Label("dpdk"), Ordered, func() {
	for _, name := range []string{"compress_zlib", "compress_isal"} {
		Context(name, Ordered, func() {
			var dev *dpdk.CompressDev

			BeforeAll(func() {
				var err error
				dev, err = eal.OpenCompressDev(name, dpdk.CompressConfig{Depth: 16, Mbufs: 128, Socket: dpdk.AnySocket})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(dev.Close)
			})

			It("reports deflate capabilities", func() {
				c := dev.Capabilities()
				Expect(c.DriverName).To(ContainSubstring(name[len("compress_"):]))
				Expect(c.MaxWindowLog).To(Equal(15))
				Expect(c.Stateful).To(BeFalse())
				GinkgoWriter.Printf("%s: %+v\n", name, c)
			})

			It("fails a truncated stream instead of hanging or passing it as whole (22.11 software PMDs do)", func() {
				var z bytes.Buffer
				w, _ := flate.NewWriter(&z, 6)
				_, _ = w.Write(corpus(300_000, 9))
				Expect(w.Close()).To(Succeed())
				for _, src := range [][]byte{{0x03}, z.Bytes()[:z.Len()/2]} {
					op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, 400_000),
						Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate}}
					run(dev, op)
					Expect(op.Status).NotTo(Equal(hw.StatusSuccess), "%d bytes of a stream", len(src))
				}
				Expect(dev.DriverStats().PrecheckRefused).To(BeNumerically(">=", 2))
			})

			It("refuses empty buffers the PMDs would walk past", func() {
				for _, op := range []*hw.CompOp{
					{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: nil, Dst: make([]byte, 64),
						Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate}},
					{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: []byte("abc"), Dst: nil,
						Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate}},
				} {
					run(dev, op)
					Expect(op.Status).To(Equal(hw.StatusInvalidArgs))
				}
			})

			It("completes a stateful operation at once with invalid-args", func() {
				op := &hw.CompOp{Type: hw.OpStateful, Flush: hw.FlushNone,
					Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate}, Src: []byte("x"), Dst: make([]byte, 64)}
				run(dev, op)
				Expect(op.Status).To(Equal(hw.StatusInvalidArgs))
				Expect(op.Debug).To(ContainSubstring("stateful"))
				Expect(dev.DriverStats().Invalid).To(BeNumerically(">=", 1))
			})

			It("refuses a checksum the device does not compute", func() {
				c := dev.Capabilities()
				if c.CRC32 && c.Adler32 {
					Skip(name + " computes both checksums")
				}
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: []byte("x"), Dst: make([]byte, 64),
					Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Checksum: hw.ChecksumCRC32}}
				if c.CRC32 {
					op.Xform.Checksum = hw.ChecksumAdler32
				}
				run(dev, op)
				Expect(op.Status).To(Equal(hw.StatusInvalidArgs))
				Expect(op.Debug).To(ContainSubstring("computes no"))
			})

			It("counts operations in its statistics", func() {
				before := dev.Stats()
				const n = 16
				for i := range n {
					src := corpus(1000*(i+1), uint64(i))
					op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, len(src)+1024),
						Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1}}
					run(dev, op)
					Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
				}
				s := dev.Stats()
				Expect(s.EnqueuedCount - before.EnqueuedCount).To(BeEquivalentTo(n))
				Expect(s.DequeuedCount).To(Equal(s.EnqueuedCount))
			})
		})
	}
})
