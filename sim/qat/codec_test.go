package qat_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"io"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

func inflateStd(b []byte) ([]byte, error) { return io.ReadAll(flate.NewReader(bytes.NewReader(b))) }

// compressOp builds a stateless compression op with room for the worst
// case of deflate.
func compressOp(src []byte, level int, huff hw.Huffman, flush hw.FlushFlag, ck hw.ChecksumType) *hw.CompOp {
	return &hw.CompOp{Type: hw.OpStateless, Flush: flush, Src: src, Dst: make([]byte, len(src)+len(src)/8+1024),
		Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: level, Huffman: huff, Checksum: ck}}
}

var _ = Describe("compression output", func() {
	var svc *qat.Service
	var insts map[string]hw.CompressInstance
	BeforeEach(func() {
		svc = newService(nil,
			qat.DeviceConfig{Name: "gen1", Model: "dh895xcc"},
			qat.DeviceConfig{Name: "gen2", Model: "c62x"},
			qat.DeviceConfig{Name: "gen4", Model: "4xxx", NUMANode: 1})
		insts = map[string]hw.CompressInstance{}
		for i, d := range svc.Devices() {
			inst, err := svc.Attach(hw.ProcessID(100+i), d.NUMANode())
			Expect(err).NotTo(HaveOccurred())
			for inst.Device() != hw.CompressDev(d) { // c62x/dh895xcc share node 0
				inst, err = svc.Attach(hw.ProcessID(100+i), d.NUMANode())
				Expect(err).NotTo(HaveOccurred())
			}
			insts[d.Name()] = inst
		}
	})

	sizes := []int{0, 1, 100, 4096, 65536, 1 << 20, 4 << 20}
	var entries []TableEntry
	for _, size := range sizes {
		for _, huff := range []hw.Huffman{hw.HuffmanDynamic, hw.HuffmanFixed} {
			for _, flush := range []hw.FlushFlag{hw.FlushFinal, hw.FlushSync, hw.FlushFull} {
				entries = append(entries, Entry(nil, size, huff, flush))
			}
		}
	}
	DescribeTable("decompresses with compress/flate to its input, every level and device",
		func(size int, huff hw.Huffman, flush hw.FlushFlag) {
			src := corpus(size, uint64(size))
			levels := []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
			switch {
			case size >= 4<<20:
				levels = []int{1, 9}
			case size >= 1<<20:
				levels = []int{1, 4, 6, 9} // every distinct hardware level
			}
			for _, dev := range []string{"gen1", "gen2", "gen4"} {
				for _, level := range levels {
					op := run(insts[dev], compressOp(src, level, huff, flush, hw.ChecksumCRC32))
					Expect(op.Status).To(Equal(hw.StatusSuccess), "%s level %d: %s", dev, level, op.Debug)
					Expect(op.Consumed).To(Equal(size))
					out := op.Dst[:op.Produced]
					if flush != hw.FlushFinal {
						Expect(out[len(out)-4:]).To(Equal([]byte{0, 0, 0xff, 0xff}), "sync marker at a byte boundary")
						out = append(append([]byte(nil), out...), 3, 0) // a final empty fixed block ends the stream
					}
					got, err := inflateStd(out)
					Expect(err).NotTo(HaveOccurred(), "%s level %d", dev, level)
					Expect(bytes.Equal(got, src)).To(BeTrue(), "%s level %d: round trip", dev, level)
					Expect(op.Checksum).To(Equal(crc32.ChecksumIEEE(src)))
				}
			}
		},
		func(size int, huff hw.Huffman, flush hw.FlushFlag) string {
			return fmt.Sprintf("%d bytes, huffman %d, flush %d", size, huff, flush)
		},
		entries)

	It("joins the outputs of successive ops into one stream, wrapped as gzip with a chained CRC32", func() {
		src := corpus(300000, 9)
		var stream []byte
		crc := uint32(0)
		for off := 0; off < len(src); off += 65536 {
			end := min(off+65536, len(src))
			flush := hw.FlushFull
			if end == len(src) {
				flush = hw.FlushFinal
			}
			op := compressOp(src[off:end], 6, hw.HuffmanDynamic, flush, hw.ChecksumCRC32)
			op.InputChecksum = crc
			op = run(insts["gen2"], op)
			Expect(op.Status).To(Equal(hw.StatusSuccess))
			crc = op.Checksum
			stream = append(stream, op.Dst[:op.Produced]...)
		}
		gz := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}
		gz = append(gz, stream...)
		gz = binary.LittleEndian.AppendUint32(gz, crc)
		gz = binary.LittleEndian.AppendUint32(gz, uint32(len(src)))
		r, err := gzip.NewReader(bytes.NewReader(gz))
		Expect(err).NotTo(HaveOccurred())
		got, err := io.ReadAll(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(src))
	})

	It("wraps as zlib with a chained Adler-32", func() {
		src := corpus(200000, 3)
		stream := []byte{0x78, 0x9c}
		adler := uint32(0) // 0 starts a new Adler-32 (at 1)
		for off := 0; off < len(src); off += 50000 {
			end := min(off+50000, len(src))
			flush := hw.FlushSync
			if end == len(src) {
				flush = hw.FlushFinal
			}
			op := compressOp(src[off:end], 9, hw.HuffmanFixed, flush, hw.ChecksumAdler32)
			op.InputChecksum = adler
			op = run(insts["gen4"], op)
			Expect(op.Status).To(Equal(hw.StatusSuccess))
			adler = op.Checksum
			stream = append(stream, op.Dst[:op.Produced]...)
		}
		Expect(adler).To(Equal(adler32.Checksum(src)))
		stream = binary.BigEndian.AppendUint32(stream, adler)
		r, err := zlib.NewReader(bytes.NewReader(stream))
		Expect(err).NotTo(HaveOccurred())
		got, err := io.ReadAll(r)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(src))
	})

	It("bounds distances to a smaller window", func() {
		src := corpus(100000, 5)
		for _, huff := range []hw.Huffman{hw.HuffmanDynamic, hw.HuffmanFixed} {
			op := compressOp(src, 6, huff, hw.FlushFinal, hw.ChecksumNone)
			op.Xform.WindowLog = 9
			op = run(insts["gen1"], op)
			Expect(op.Status).To(Equal(hw.StatusSuccess), op.Debug)
			got, maxDist, err := qat.InflateForTest(op.Dst[:op.Produced])
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(src))
			Expect(maxDist).To(BeNumerically("<=", 512))
			Expect(maxDist).To(BeNumerically(">", 0))
		}
	})

	It("reports a destination that is too small as out of space, terminated", func() {
		src := corpus(10000, 1)
		op := compressOp(src, 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)
		op.Dst = make([]byte, 100)
		op = run(insts["gen1"], op)
		Expect(op.Status).To(Equal(hw.StatusOutOfSpaceTerminated))
		Expect(op.Produced).To(BeZero())
		Expect(op.Debug).To(ContainSubstring("too small"))
		Expect(svc.Stats().Devices[0].Errors.OutOfSpace).To(BeEquivalentTo(1))
	})

	DescribeTable("refuses what QAT does not do with invalid-args and a reason",
		func(mut func(*hw.CompOp), reason string) {
			op := compressOp([]byte("hello"), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)
			mut(op)
			op = run(insts["gen1"], op)
			Expect(op.Status).To(Equal(hw.StatusInvalidArgs))
			Expect(op.Debug).To(ContainSubstring(reason))
		},
		Entry("level 0", func(op *hw.CompOp) { op.Xform.Level = 0 }, "level 0"),
		Entry("flush none", func(op *hw.CompOp) { op.Flush = hw.FlushNone }, "flush"),
		Entry("stateful compression", func(op *hw.CompOp) { op.Type = hw.OpStateful }, "stateful"),
		Entry("combined checksum", func(op *hw.CompOp) { op.Xform.Checksum = hw.ChecksumCRC32Adler32 }, "combined"),
		Entry("window 16", func(op *hw.CompOp) { op.Xform.WindowLog = 16 }, "window_log"),
	)

	It("maps levels as the hardware does", func() {
		Expect([]int{qat.HardwareLevel(qat.Gen1, 1), qat.HardwareLevel(qat.Gen2, 4), qat.HardwareLevel(qat.Gen2, 5), qat.HardwareLevel(qat.Gen2, 9)}).To(Equal([]int{1, 4, 4, 4}))
		Expect([]int{qat.HardwareLevel(qat.Gen4, 5), qat.HardwareLevel(qat.Gen4, 6), qat.HardwareLevel(qat.Gen4, 8), qat.HardwareLevel(qat.Gen4, 9)}).To(Equal([]int{1, 6, 6, 9}))
		// Levels above 4 on Gen2 give the bytes of level 4.
		src := corpus(50000, 2)
		a := run(insts["gen2"], compressOp(src, 4, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone))
		b := run(insts["gen2"], compressOp(src, 9, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone))
		Expect(a.Dst[:a.Produced]).To(Equal(b.Dst[:b.Produced]))
	})

	It("copies with the null algorithm", func() {
		op := compressOp([]byte("plain"), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumCRC32)
		op.Xform.Algo = hw.AlgoNull
		op = run(insts["gen1"], op)
		Expect(op.Status).To(Equal(hw.StatusSuccess))
		Expect(op.Dst[:op.Produced]).To(Equal([]byte("plain")))
	})
})
