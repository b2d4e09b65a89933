package qat_test

import (
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

// benchOps pushes ops of one kind through an untimed instance.
func benchOps(b *testing.B, mk func() *hw.CompOp) {
	svc := newService(nil, qat.DeviceConfig{Model: "c62x", Instances: 1})
	inst, err := svc.Attach(1, 0)
	if err != nil {
		b.Fatal(err)
	}
	dev := inst.Device()
	op := mk()
	ops, out := []*hw.CompOp{op}, make([]*hw.CompOp, 1)
	b.SetBytes(int64(len(op.Src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dev.EnqueueBurst(0, ops)
		if dev.DequeueBurst(0, out) != 1 || out[0].Status != hw.StatusSuccess {
			b.Fatal("op failed")
		}
	}
}

func BenchmarkCompress64KDynamicL1(b *testing.B) {
	src := corpus(64<<10, 1)
	benchOps(b, func() *hw.CompOp { return compressOp(src, 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumCRC32) })
}

func BenchmarkCompress64KDynamicL4(b *testing.B) {
	src := corpus(64<<10, 1)
	benchOps(b, func() *hw.CompOp { return compressOp(src, 4, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumCRC32) })
}

func BenchmarkCompress64KFixed(b *testing.B) {
	src := corpus(64<<10, 1)
	benchOps(b, func() *hw.CompOp { return compressOp(src, 1, hw.HuffmanFixed, hw.FlushFinal, hw.ChecksumCRC32) })
}

func BenchmarkDecompress64K(b *testing.B) {
	src := corpus(64<<10, 1)
	stream := deflateStd(src, 6)
	benchOps(b, func() *hw.CompOp {
		op := decompressOp(hw.OpStateless, stream, make([]byte, len(src)), hw.FlushFinal)
		op.Src = stream
		return op
	})
}
