//go:build dpdk

package dpdk_test

import (
	"bytes"
	"compress/flate"
	"io"
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
)

// FuzzDeviceInflate feeds arbitrary bytes to the compress devices as a
// deflate stream: a device must complete every operation with a status
// (never crash the process or corrupt the staging pool), and whatever a
// device accepts as a whole stream must be what compress/flate reads.
func FuzzDeviceInflate(f *testing.F) {
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, 6)
	_, _ = w.Write(corpus(5000, 1))
	_ = w.Close()
	f.Add(z.Bytes())
	f.Add([]byte{0x03, 0x00})                   // empty final fixed block
	f.Add([]byte{0x03})                         // truncated: hung compress_isal before the precheck
	f.Add([]byte{0x01, 0x00, 0x00, 0xff, 0xff}) // empty stored block
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Add([]byte{})

	var devs []*dpdk.CompressDev
	for _, name := range []string{"compress_zlib", "compress_isal"} {
		d, err := eal.OpenCompressDev(name, dpdk.CompressConfig{Depth: 4, Mbufs: 64, Socket: dpdk.AnySocket})
		if err != nil {
			f.Fatal(err)
		}
		defer d.Close()
		devs = append(devs, d)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(src)), 1<<20))
		for _, d := range devs {
			op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, 1<<20),
				Xform: hw.Xform{Kind: hw.XformDecompress, Algo: hw.AlgoDeflate}}
			if d.EnqueueBurst(0, []*hw.CompOp{op}) != 1 {
				t.Fatalf("%s: enqueue refused", d.Name())
			}
			out := make([]*hw.CompOp, 1)
			for d.DequeueBurst(0, out) == 0 {
			}
			if op.Status == hw.StatusNotProcessed {
				t.Fatalf("%s: completed without a status", d.Name())
			}
			// A device may stop at the final block and leave trailing bytes
			// unread, as compress/flate does; compare only clean successes.
			if op.Status == hw.StatusSuccess && werr == nil && op.Consumed == len(src) &&
				!bytes.Equal(op.Dst[:op.Produced], want) {
				t.Fatalf("%s: inflated %d bytes, compress/flate %d", d.Name(), op.Produced, len(want))
			}
		}
	})
}
