package qat_test

import (
	"bytes"
	"compress/flate"
	"io"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

func deflateStd(src []byte, level int) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, level)
	_, _ = w.Write(src)
	_ = w.Close()
	return b.Bytes()
}

// decompressOp builds a decompression op.
func decompressOp(typ hw.OpType, src, dst []byte, flush hw.FlushFlag) *hw.CompOp {
	return &hw.CompOp{Type: typ, Flush: flush, Src: src, Dst: dst,
		Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate, Checksum: hw.ChecksumCRC32}}
}

// inflateThrough decompresses stream with stateful ops of chunk input
// bytes and dst output bytes, resubmitting what was not consumed.
func inflateThrough(inst hw.CompressInstance, stream []byte, chunk, dstSize int) ([]byte, uint32, *hw.CompOp) {
	var out []byte
	crc := uint32(0)
	for i := 0; i < 1<<20; i++ {
		n := min(chunk, len(stream))
		flush := hw.FlushSync
		if n == len(stream) {
			flush = hw.FlushFinal
		}
		op := decompressOp(hw.OpStateful, stream[:n], make([]byte, dstSize), flush)
		op.InputChecksum = crc
		op = run(inst, op)
		if op.Status != hw.StatusSuccess && op.Status != hw.StatusOutOfSpaceRecoverable {
			return out, crc, op
		}
		crc = op.Checksum
		out = append(out, op.Dst[:op.Produced]...)
		stream = stream[op.Consumed:]
		if len(stream) == 0 && op.Status == hw.StatusSuccess && op.Produced < dstSize {
			return out, crc, op
		}
	}
	return out, crc, nil
}

var _ = Describe("decompression", func() {
	var svc *qat.Service
	var inst hw.CompressInstance
	BeforeEach(func() {
		svc = newService(nil, qat.DeviceConfig{Model: "c62x"})
		var err error
		inst, err = svc.Attach(1, 0)
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("stateful ops split anywhere decode what compress/flate wrote",
		func(size, level, chunk, dstSize int) {
			src := corpus(size, uint64(size+level))
			out, crc, last := inflateThrough(inst, deflateStd(src, level), chunk, dstSize)
			Expect(last).NotTo(BeNil())
			Expect(last.Status).To(Equal(hw.StatusSuccess), last.Debug)
			Expect(out).To(Equal(src))
			Expect(crc).To(Equal(crc32ieee(src)))
		},
		Entry("empty stream", 0, 6, 10, 100),
		Entry("stored blocks", 70000, flate.NoCompression, 1000, 65536),
		Entry("1-byte input chunks", 20000, 6, 1, 65536),
		Entry("tiny output space (out-of-space recoverable)", 20000, 9, 4096, 7),
		Entry("huffman only", 50000, flate.HuffmanOnly, 333, 4096),
		Entry("1 MiB, 64 KiB ops", 1<<20, 1, 65536, 65536),
		Entry("4 MiB, 1 MiB ops", 4<<20, 6, 1<<20, 1<<20),
	)

	It("decodes its own fixed-Huffman output split across ops", func() {
		src := corpus(100000, 4)
		op := run(inst, compressOp(src, 1, hw.HuffmanFixed, hw.FlushFinal, hw.ChecksumNone))
		out, _, last := inflateThrough(inst, op.Dst[:op.Produced], 777, 5000)
		Expect(last.Status).To(Equal(hw.StatusSuccess))
		Expect(out).To(Equal(src))
	})

	It("decodes a whole stream in one stateless op and reports unused trailing bytes", func() {
		src := corpus(30000, 8)
		stream := append(deflateStd(src, 5), 0xde, 0xad, 0xbe, 0xef) // e.g. a gzip trailer
		op := run(inst, decompressOp(hw.OpStateless, stream, make([]byte, 40000), hw.FlushFinal))
		Expect(op.Status).To(Equal(hw.StatusSuccess))
		Expect(op.Dst[:op.Produced]).To(Equal(src))
		Expect(op.Consumed).To(Equal(len(stream) - 4))
	})

	It("fails a stateless op whose destination is too small as terminated", func() {
		stream := deflateStd(corpus(30000, 8), 5)
		op := run(inst, decompressOp(hw.OpStateless, stream, make([]byte, 100), hw.FlushFinal))
		Expect(op.Status).To(Equal(hw.StatusOutOfSpaceTerminated))
	})

	DescribeTable("fails corrupt input with a reason and counts it",
		func(stream []byte, reason string) {
			op := run(inst, decompressOp(hw.OpStateful, stream, make([]byte, 1000), hw.FlushFinal))
			Expect(op.Status).To(Equal(hw.StatusError))
			Expect(op.Debug).To(ContainSubstring(reason))
			Expect(svc.Stats().Devices[0].Errors.Corrupt).To(BeEquivalentTo(1))
			// The stream state was reset: a good stream decodes next.
			good := deflateStd([]byte("after the error"), 6)
			op = run(inst, decompressOp(hw.OpStateful, good, make([]byte, 100), hw.FlushFinal))
			Expect(op.Status).To(Equal(hw.StatusSuccess))
			Expect(string(op.Dst[:op.Produced])).To(Equal("after the error"))
		},
		Entry("block type 3", []byte{0x07}, "block type"),
		Entry("stored length mismatch", []byte{0x01, 0x05, 0x00, 0x00, 0x00}, "complement"),
		Entry("distance too far back", []byte{0x03, 0x02, 0x00}, "too far back"),
	)

	It("fails a stateless op that ends before the final block", func() {
		stream := deflateStd(corpus(30000, 8), 5)
		op := run(inst, decompressOp(hw.OpStateless, stream[:len(stream)/2], make([]byte, 40000), hw.FlushFinal))
		Expect(op.Status).To(Equal(hw.StatusError))
		Expect(op.Debug).To(ContainSubstring("before its final block"))
	})
})

// FuzzInflate checks the model's inflater, a parser of untrusted bytes,
// against compress/flate: it must never panic, and whenever either
// decoder accepts a whole stream both must agree on its bytes.
func FuzzInflate(f *testing.F) {
	f.Add([]byte{0x03, 0x00})
	f.Add(deflateStd([]byte("hello, hello, hello, world"), 9))
	f.Add(deflateStd(corpus(3000, 1), 1))
	f.Add(deflateStd(corpus(3000, 2), flate.NoCompression))
	f.Add(deflateStd(corpus(3000, 3), flate.HuffmanOnly))
	f.Add([]byte{0x07, 0x01, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := io.ReadAll(flate.NewReader(bytes.NewReader(b)))
		got, _, gerr := qat.InflateForTest(b)
		if werr == nil && gerr != nil {
			t.Fatalf("compress/flate accepts, model fails: %v", gerr)
		}
		if gerr == nil && werr != nil {
			t.Fatalf("model accepts, compress/flate fails: %v", werr)
		}
		if werr == nil && !bytes.Equal(want, got) {
			t.Fatalf("outputs differ: %d vs %d bytes", len(want), len(got))
		}
	})
}
