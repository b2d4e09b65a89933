package zlibshim

import (
	"github.com/klauspost/compress/flate"
)

// The software path: klauspost/compress's deflate, continuing the stream
// wherever hardware leaves it (after a full-flush boundary) and handing it
// back at a byte boundary.

// swState is the software compressor and where its output stands.
type swState struct {
	w *flate.Writer
	// open: data was written since the last byte-aligned boundary.
	open bool
	// needReset: other output (hardware, a full flush, the final block)
	// came after the compressor's, so its history is no longer the
	// decoder's and it must start fresh.
	needReset bool
}

// outSink appends the software compressor's output to the stream's.
type outSink struct{ d *Deflater }

func (s *outSink) Write(b []byte) (int, error) {
	s.d.out = append(s.d.out, b...)
	s.d.p.stats.SWBytesOut += uint64(len(b))
	return len(b), nil
}

// swLevel maps zlib's level and strategy to klauspost/compress's.
func (d *Deflater) swLevel() int {
	switch d.strategy {
	case HuffmanOnly:
		return flate.HuffmanOnly
	case RLE:
		return flate.BestSpeed // the nearest: short matches, fast
	}
	return d.level
}

// swReset makes the software compressor fresh, creating it if needed.
func (d *Deflater) swReset() {
	if d.sw.w == nil {
		d.sw.w = d.p.takeWriter(d.swLevel(), d.sink)
	} else {
		d.sw.w.Reset(d.sink)
	}
	d.sw.needReset = false
	d.sw.open = false
}

// swCompress feeds the software compressor and charges the work.
func (d *Deflater) swCompress(data []byte) {
	if d.sw.w == nil || d.sw.needReset {
		d.swReset()
	}
	d.sw.open = true
	_, _ = d.sw.w.Write(data) // the sink never fails
	d.p.meter.Charge(DeflateByteOp(d.level), int64(len(data)))
	d.p.stats.SWBytesIn += uint64(len(data))
}

// swWrite compresses data in software as part of the stream.
func (d *Deflater) swWrite(data []byte) {
	d.swCompress(data)
	d.updateSum(data)
	d.size += uint32(len(data))
}

// swEnd ends the software part at a flush point. Every state but "open"
// is a byte boundary, so the shim can write the markers itself.
func (d *Deflater) swEnd(end chunkEnd) {
	switch end {
	case endSync, endFull:
		if d.sw.open {
			_ = d.sw.w.Flush()
			d.sw.open = false
		} else {
			d.out = appendSyncMarker(d.out)
		}
		if end == endFull {
			d.sw.needReset = true
		}
	case endFinal:
		if d.sw.open {
			_ = d.sw.w.Close()
			d.sw.open = false
		} else {
			d.out = appendEmptyFinalBlock(d.out)
		}
		d.sw.needReset = true
	}
}
