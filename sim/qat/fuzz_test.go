package qat_test

import (
	"bytes"
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

// FuzzCompress checks that whatever bytes the device is given, at any
// level, Huffman mode, flush and window, its output decompresses with
// compress/flate to them.
func FuzzCompress(f *testing.F) {
	f.Add([]byte(""), uint8(1), uint8(0), uint8(0), uint8(15))
	f.Add([]byte("hello hello hello hello"), uint8(9), uint8(1), uint8(1), uint8(15))
	f.Add(corpus(5000, 1), uint8(4), uint8(2), uint8(2), uint8(9))
	svc := newService(nil, qat.DeviceConfig{Model: "c62x", Instances: 1})
	inst, err := svc.Attach(1, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, level, huff, flush, wl uint8) {
		fl := []hw.FlushFlag{hw.FlushFinal, hw.FlushSync, hw.FlushFull}[flush%3]
		op := compressOp(src, int(level%9)+1, hw.Huffman(huff%3), fl, hw.ChecksumCRC32)
		op.Xform.WindowLog = 8 + int(wl%8)
		op = run(inst, op)
		if op.Status != hw.StatusSuccess {
			t.Fatalf("status %v: %s", op.Status, op.Debug)
		}
		out := op.Dst[:op.Produced]
		if fl != hw.FlushFinal {
			out = append(append([]byte(nil), out...), 3, 0)
		}
		got, err := inflateStd(out)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("round trip failed: %v", err)
		}
		got, maxDist, err := qat.InflateForTest(out)
		if err != nil || !bytes.Equal(got, src) || maxDist > 1<<op.Xform.WindowLog {
			t.Fatalf("model inflater: %v, max distance %d for window %d", err, maxDist, 1<<op.Xform.WindowLog)
		}
	})
}
