//go:build dpdk

package dpdk_test

import (
	"bytes"
	"compress/flate"
	"hash/adler32"
	"hash/crc32"
	"io"
	"math/rand/v2"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
)

// corpus returns n bytes that compress somewhat, like text: words drawn
// from a small vocabulary with some random bytes mixed in.
func corpus(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	words := []string{"savanna ", "gazelle ", "deflate ", "mbuf ", "lcore ", "qat ", "ring ", "burst\n"}
	var b bytes.Buffer
	for b.Len() < n {
		if rng.IntN(8) == 0 {
			b.WriteByte(byte(rng.Uint32()))
			continue
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

// run submits one operation and polls until it completes.
func run(d *dpdk.CompressDev, op *hw.CompOp) {
	Expect(d.EnqueueBurst(0, []*hw.CompOp{op})).To(Equal(1))
	out := make([]*hw.CompOp, 1)
	Eventually(func() int { return d.DequeueBurst(0, out) }).Should(Equal(1))
	Expect(out[0]).To(BeIdenticalTo(op))
}

// sizes cross the 64 KiB - 1 segment limit, so the larger ones travel in
// chains of mbufs.
var roundTripSizes = []int{0, 1, 1000, hw.MaxSegmentData - 1, hw.MaxSegmentData, hw.MaxSegmentData + 1, 200_000, 1 << 20}

// checksums lists the checksum types dev computes, none first.
func checksums(dev *dpdk.CompressDev) []hw.ChecksumType {
	out := []hw.ChecksumType{hw.ChecksumNone}
	if dev.Capabilities().CRC32 {
		out = append(out, hw.ChecksumCRC32)
	}
	if dev.Capabilities().Adler32 {
		out = append(out, hw.ChecksumAdler32)
	}
	return out
}

// checkSum checks a device checksum of the uncompressed data.
func checkSum(ck hw.ChecksumType, got uint32, data []byte) {
	switch ck {
	case hw.ChecksumCRC32:
		Expect(got).To(Equal(crc32.ChecksumIEEE(data)), "CRC32 of %d bytes", len(data))
	case hw.ChecksumAdler32:
		Expect(got).To(Equal(adler32.Checksum(data)), "Adler-32 of %d bytes", len(data))
	}
}

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

			for _, size := range roundTripSizes {
				It("compresses so that compress/flate reads it back", func() {
					src := corpus(size, uint64(size))
					for _, ck := range checksums(dev) {
						xf := hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 6, Huffman: hw.HuffmanDynamic, Checksum: ck}
						op := &hw.CompOp{Type: hw.OpStateless, Xform: xf, Flush: hw.FlushFinal,
							Src: src, Dst: make([]byte, size+size/8+1024)}
						run(dev, op)
						Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
						Expect(op.Consumed).To(Equal(size))
						got, err := io.ReadAll(flate.NewReader(bytes.NewReader(op.Dst[:op.Produced])))
						Expect(err).NotTo(HaveOccurred())
						Expect(bytes.Equal(got, src)).To(BeTrue(), "round trip of %d bytes", size)
						checkSum(ck, op.Checksum, src)
					}
				})

				It("decompresses what compress/flate wrote", func() {
					src := corpus(size, uint64(size)+1)
					var z bytes.Buffer
					w, err := flate.NewWriter(&z, 6)
					Expect(err).NotTo(HaveOccurred())
					_, _ = w.Write(src)
					Expect(w.Close()).To(Succeed())
					for _, ck := range checksums(dev) {
						xf := hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate, Checksum: ck}
						op := &hw.CompOp{Type: hw.OpStateless, Xform: xf, Flush: hw.FlushFinal,
							Src: z.Bytes(), Dst: make([]byte, size+16)}
						run(dev, op)
						Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
						Expect(op.Consumed).To(Equal(z.Len()))
						Expect(op.Produced).To(Equal(size))
						Expect(bytes.Equal(op.Dst[:op.Produced], src)).To(BeTrue(), "round trip of %d bytes", size)
						checkSum(ck, op.Checksum, src)
					}
				})
			}

			It("keeps submission order over a burst of operations", func() {
				ops := make([]*hw.CompOp, 8)
				for i := range ops {
					src := corpus(10_000*(i+1), uint64(i))
					ops[i] = &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, UserData: uint64(i),
						Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1},
						Src:   src, Dst: make([]byte, len(src)+1024)}
				}
				Expect(dev.EnqueueBurst(0, ops)).To(Equal(len(ops)))
				var done []*hw.CompOp
				out := make([]*hw.CompOp, 3)
				Eventually(func() int {
					n := dev.DequeueBurst(0, out)
					done = append(done, out[:n]...)
					return len(done)
				}).Should(Equal(len(ops)))
				for i, op := range done {
					Expect(op.UserData).To(BeEquivalentTo(i))
					Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
				}
			})

			It("reports a destination too small", func() {
				src := corpus(100_000, 3)
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal,
					Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1},
					Src:   src, Dst: make([]byte, 100)}
				run(dev, op)
				Expect(op.Status).NotTo(Equal(hw.StatusSuccess))
				Expect(op.Debug).NotTo(BeEmpty())
			})

			It("fails a corrupt stream with an error status, not a crash", func() {
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal,
					Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate},
					Src:   []byte{0xff, 0xff, 0xff, 0xff, 0x00, 0x13}, Dst: make([]byte, 1024)}
				run(dev, op)
				Expect(op.Status).NotTo(Equal(hw.StatusSuccess))
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
				s := dev.Stats()
				Expect(s.EnqueuedCount).To(BeNumerically(">=", 2*len(roundTripSizes)))
				Expect(s.DequeuedCount).To(Equal(s.EnqueuedCount))
			})
		})
	}
})
