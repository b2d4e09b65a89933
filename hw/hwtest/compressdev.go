package hwtest

import (
	"bytes"
	"compress/flate"
	"hash/adler32"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
)

// CompressTarget is one queue pair of a compress device under test (on
// QAT, a process's instance), ready for operations.
type CompressTarget struct {
	Dev hw.CompressDev
	QP  int
	// Advance lets time pass between polls for completions: a simulated
	// device with a clock moves it, a real one yields.
	Advance func()
	// Quirks are the target's documented differences beyond
	// hw.CompressCapabilities.
	Quirks CompressQuirks
}

// CompressQuirks are behaviours in which compress backends genuinely
// differ and that hw.CompressCapabilities does not carry.
type CompressQuirks struct {
	// EmptyDecompressInvalid: decompressing an empty source completes
	// with hw.StatusInvalidArgs (refused before the device, as hw/dpdk
	// does because the 22.11 software PMDs crash on it) rather than with
	// another error status.
	EmptyDecompressInvalid bool
}

// compressSizes cross the 64 KiB - 1 mbuf segment limit
// (hw.MaxSegmentData), so that the larger operations travel in chains on
// DPDK.
var compressSizes = []int{0, 1, 1000, hw.MaxSegmentData - 1, hw.MaxSegmentData, hw.MaxSegmentData + 1, 200_000, 1 << 20}

// Corpus returns n bytes that compress somewhat, like text: words from a
// small vocabulary with random bytes mixed in.
func Corpus(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	words := []string{"savanna ", "gazelle ", "deflate ", "mbuf ", "lcore ", "qat ", "ring ", "burst\n"}
	b := make([]byte, 0, n+16)
	for len(b) < n {
		if rng.IntN(8) == 0 {
			b = append(b, byte(rng.Uint32()))
			continue
		}
		b = append(b, words[rng.IntN(len(words))]...)
	}
	return b[:n]
}

// CompressDevSpecs declares the hw.CompressDev conformance specs against
// the queue pair factory gives; factory runs once, before the first
// spec.
func CompressDevSpecs(factory func() *CompressTarget) {
	Describe("hw.CompressDev conformance", Ordered, func() {
		var t *CompressTarget
		BeforeAll(func() { t = factory() })

		It("reports deflate capabilities it can keep", func() {
			c := t.Dev.Capabilities()
			Expect(c.DriverName).NotTo(BeEmpty())
			Expect(c.MaxQueuePairs).To(BeNumerically(">", t.QP))
			Expect(c.MaxWindowLog).To(Equal(15), "deflate's 32 KiB window")
			Expect(c.MinWindowLog).To(BeNumerically("<=", c.MaxWindowLog))
			Expect(c.MaxLevel).To(BeNumerically(">=", 1))
			Expect(c.FixedHuffman || c.DynamicHuffman).To(BeTrue())
		})

		for _, size := range compressSizes {
			It(sizeName(size)+": compresses so that compress/flate reads it back, and inflates it again", func() {
				src := Corpus(size, uint64(size))
				for _, h := range huffmans(t) {
					for _, ck := range checksums(t) {
						xf := hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 6, Huffman: h, Checksum: ck, WindowLog: 15}
						op := &hw.CompOp{Type: hw.OpStateless, Xform: xf, Flush: hw.FlushFinal,
							Src: src, Dst: make([]byte, size+size/8+1024)}
						runOp(t, op)
						Expect(op.Status).To(Equal(hw.StatusSuccess), "huffman %d checksum %d: %s", h, ck, op.Debug)
						Expect(op.Consumed).To(Equal(size))
						z := op.Dst[:op.Produced]
						got, err := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
						Expect(err).NotTo(HaveOccurred(), "compress/flate reads the device's stream")
						Expect(bytes.Equal(got, src)).To(BeTrue(), "round trip of %d bytes", size)
						checkSum(ck, op.Checksum, src)

						back := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: z, Dst: make([]byte, size+64),
							Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate, Checksum: ck, WindowLog: 15}}
						runOp(t, back)
						Expect(back.Status).To(Equal(hw.StatusSuccess), back.Debug)
						Expect(back.Consumed).To(Equal(len(z)))
						Expect(back.Produced).To(Equal(size))
						Expect(bytes.Equal(back.Dst[:back.Produced], src)).To(BeTrue())
						checkSum(ck, back.Checksum, src)
					}
				}
			})
		}

		DescribeTable("inflates what compress/flate wrote at any level",
			func(level int) {
				src := Corpus(150_000, uint64(level))
				var z bytes.Buffer
				w, err := flate.NewWriter(&z, level)
				Expect(err).NotTo(HaveOccurred())
				_, _ = w.Write(src)
				Expect(w.Close()).To(Succeed())
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: z.Bytes(), Dst: make([]byte, len(src)+16),
					Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate, WindowLog: 15}}
				runOp(t, op)
				Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
				Expect(op.Produced).To(Equal(len(src)))
				Expect(bytes.Equal(op.Dst[:op.Produced], src)).To(BeTrue())
			},
			Entry("stored (0)", 0), Entry("fastest (1)", 1), Entry("default (6)", 6), Entry("best (9)", 9),
		)

		It("compresses at every level it accepts, the stream always readable", func() {
			src := Corpus(100_000, 77)
			for level := 1; level <= 9; level++ {
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, len(src)+1024),
					Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: level, Huffman: hw.HuffmanDefault, WindowLog: 15}}
				runOp(t, op)
				Expect(op.Status).To(Equal(hw.StatusSuccess), "level %d: %s", level, op.Debug)
				got, err := io.ReadAll(flate.NewReader(bytes.NewReader(op.Dst[:op.Produced])))
				Expect(err).NotTo(HaveOccurred(), "level %d", level)
				Expect(bytes.Equal(got, src)).To(BeTrue(), "level %d", level)
			}
		})

		It("completes a burst in submission order", func() {
			ops := make([]*hw.CompOp, 8)
			for i := range ops {
				src := Corpus(10_000*(i+1), uint64(i))
				ops[i] = &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, UserData: uint64(100 + i),
					Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1, WindowLog: 15},
					Src:   src, Dst: make([]byte, len(src)+1024)}
			}
			before := t.Dev.Stats()
			taken := 0
			for i := 0; i < maxPolls && taken < len(ops); i++ {
				taken += t.Dev.EnqueueBurst(t.QP, ops[taken:])
			}
			Expect(taken).To(Equal(len(ops)))
			done := drain(t, len(ops))
			Expect(done).To(HaveLen(len(ops)))
			for i, op := range done {
				Expect(op).To(BeIdenticalTo(ops[i]), "completion %d", i)
				Expect(op.UserData).To(BeEquivalentTo(100 + i))
				Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
			}
			after := t.Dev.Stats()
			Expect(after.EnqueuedCount - before.EnqueuedCount).To(BeEquivalentTo(len(ops)))
			Expect(after.DequeuedCount - before.DequeuedCount).To(BeEquivalentTo(len(ops)))
			Expect(after.DequeueErrCount).To(Equal(before.DequeueErrCount))
		})

		DescribeTable("fails corrupt input with an error status, counted, never a panic",
			func(input func() []byte) {
				before := t.Dev.Stats()
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: input(), Dst: make([]byte, 400_000),
					Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate, WindowLog: 15}}
				runOp(t, op)
				Expect(op.Status).NotTo(BeElementOf(hw.StatusSuccess, hw.StatusNotProcessed), "%d bytes of bad input", len(op.Src))
				if len(op.Src) == 0 && t.Quirks.EmptyDecompressInvalid {
					Expect(op.Status).To(Equal(hw.StatusInvalidArgs))
				}
				Expect(t.Dev.Stats().DequeueErrCount-before.DequeueErrCount).To(BeEquivalentTo(1), "counted in dequeue_err_count")
			},
			Entry("an empty source", func() []byte { return nil }),
			Entry("a reserved block type (BTYPE 11)", func() []byte { return []byte{0x07, 0x00, 0x00, 0x00} }),
			Entry("a stored block whose NLEN is not ~LEN", func() []byte { return []byte{0x01, 0x05, 0x00, 0x05, 0x00, 'h', 'e', 'l', 'l', 'o'} }),
			Entry("random bytes", func() []byte {
				b := make([]byte, 4096)
				r := rand.New(rand.NewPCG(5, 5))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				b[0] = 0xff // BFINAL, BTYPE 11: never valid
				return b
			}),
			Entry("a stream cut in half", func() []byte {
				var z bytes.Buffer
				w, _ := flate.NewWriter(&z, 6)
				_, _ = w.Write(Corpus(300_000, 9))
				_ = w.Close()
				return z.Bytes()[:z.Len()/2]
			}),
			Entry("a stream without its final block", func() []byte {
				var z bytes.Buffer
				w, _ := flate.NewWriter(&z, 6)
				_, _ = w.Write(Corpus(20_000, 10))
				_ = w.Flush() // a sync flush: whole blocks, none final
				return z.Bytes()
			}),
		)

		It("reports a destination too small for the output", func() {
			before := t.Dev.Stats()
			src := Corpus(100_000, 3)
			op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, 100),
				Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1, WindowLog: 15}}
			runOp(t, op)
			Expect(op.Status).To(Equal(hw.StatusOutOfSpaceTerminated), op.Debug)
			Expect(t.Dev.Stats().DequeueErrCount - before.DequeueErrCount).To(BeEquivalentTo(1))
		})

		It("refuses a checksum it does not compute, and computes those it says it does", func() {
			c := t.Dev.Capabilities()
			for _, x := range []struct {
				ck   hw.ChecksumType
				has  bool
				want func([]byte) uint32
			}{{hw.ChecksumCRC32, c.CRC32, crc32.ChecksumIEEE}, {hw.ChecksumAdler32, c.Adler32, adler32.Checksum}} {
				src := []byte("a checksum over these bytes")
				op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, 256),
					Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1, Checksum: x.ck, WindowLog: 15}}
				runOp(t, op)
				if x.has {
					Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
					Expect(op.Checksum).To(Equal(x.want(src)))
				} else {
					Expect(op.Status).To(Equal(hw.StatusInvalidArgs), "checksum %d is not in the capabilities", x.ck)
				}
			}
		})

		It("takes stateful operations only if its capabilities say so", func() {
			src := Corpus(5000, 1)
			var z bytes.Buffer
			w, _ := flate.NewWriter(&z, 6)
			_, _ = w.Write(src)
			_ = w.Close()
			op := &hw.CompOp{Type: hw.OpStateful, Flush: hw.FlushFinal, Src: z.Bytes(), Dst: make([]byte, 8000),
				Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate, WindowLog: 15}}
			runOp(t, op)
			if t.Dev.Capabilities().Stateful {
				Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
				Expect(op.Dst[:op.Produced]).To(Equal(src))
			} else {
				Expect(op.Status).To(Equal(hw.StatusInvalidArgs), "no stateful support in the capabilities")
			}
		})
	})
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	default:
		return strconv.Itoa(n) + " B"
	}
}

// huffmans lists the encodings the device offers.
func huffmans(t *CompressTarget) []hw.Huffman {
	c := t.Dev.Capabilities()
	var out []hw.Huffman
	if c.DynamicHuffman {
		out = append(out, hw.HuffmanDynamic)
	}
	if c.FixedHuffman {
		out = append(out, hw.HuffmanFixed)
	}
	return out
}

// checksums lists the checksum types the device computes, none first.
func checksums(t *CompressTarget) []hw.ChecksumType {
	c := t.Dev.Capabilities()
	out := []hw.ChecksumType{hw.ChecksumNone}
	if c.CRC32 {
		out = append(out, hw.ChecksumCRC32)
	}
	if c.Adler32 {
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

// runOp submits one operation and polls until it completes.
func runOp(t *CompressTarget, op *hw.CompOp) {
	taken := 0
	for i := 0; i < maxPolls && taken == 0; i++ {
		if taken = t.Dev.EnqueueBurst(t.QP, []*hw.CompOp{op}); taken == 0 {
			t.Advance()
		}
	}
	Expect(taken).To(Equal(1), "the device took the operation")
	done := drain(t, 1)
	Expect(done).To(HaveLen(1), "the operation completed")
	Expect(done[0]).To(BeIdenticalTo(op))
}

// drain dequeues n completions, polling with Advance.
func drain(t *CompressTarget, n int) []*hw.CompOp {
	var done []*hw.CompOp
	out := make([]*hw.CompOp, 3)
	for i := 0; i < maxPolls && len(done) < n; i++ {
		k := t.Dev.DequeueBurst(t.QP, out)
		done = append(done, out[:k]...)
		if k == 0 {
			t.Advance()
		}
	}
	return done
}
