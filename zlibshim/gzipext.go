package zlibshim

import "github.com/savanna-sim/savanna/hw"

// member writes one gzip-ext member holding data: QATzip's format, where
// every request is a complete gzip member that any gunzip concatenates.
func (d *Deflater) member(data []byte, end chunkEnd) error {
	if len(data) == 0 && (end != endFinal || d.members > 0) {
		return nil // members are always complete: a flush has nothing to add
	}
	hdrAt := len(d.out)
	d.out = appendGzipExtHeader(d.out, d.level)
	bodyAt := len(d.out)
	var crc uint32
	served := false
	if len(data) > 0 && d.wantHW(len(data)) {
		var hwSum bool
		var err error
		served, crc, hwSum, err = d.hwRequest(data, hw.FlushFinal, hw.ChecksumCRC32, 0)
		if err != nil {
			d.out = d.out[:hdrAt]
			return err
		}
		if served && !hwSum {
			crc = crc32Update(0, data)
			d.p.meter.Charge(CostCRC32Byte, int64(len(data)))
		}
	}
	if !served {
		d.swReset()
		if len(data) > 0 {
			d.swCompress(data)
			d.p.stats.SWRequests++
			crc = crc32Update(0, data)
			d.p.meter.Charge(CostCRC32Byte, int64(len(data)))
		}
		d.swEnd(endFinal)
	}
	patchGzipExtHeader(d.out[hdrAt:], uint32(len(data)), uint32(len(d.out)-bodyAt))
	d.out = appendGzipTrailer(d.out, crc, uint32(len(data)))
	d.members++
	return nil
}
