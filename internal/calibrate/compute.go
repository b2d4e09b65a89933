package calibrate

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"runtime"

	"github.com/klauspost/compress/flate"

	"github.com/savanna-sim/savanna/internal/inflate"
	"github.com/savanna-sim/savanna/stack/checksum"
)

// perByte times f, which handles bytes bytes a pass, on the measuring
// CPU by the thread's CPU clock, in batches (timeBatches), and returns
// the CPU time per byte.
func perByte(scale float64, bytes int, f func() error) (float64, error) {
	s, err := onMeasureCPU(func() (Sample, error) {
		v, _, err := timeBatches(budgetFor(scale), threadClock, func(n int) (float64, error) {
			for range n {
				if err := f(); err != nil {
					return 0, err
				}
			}
			return float64(n * bytes), nil
		})
		return Sample{Value: v}, err
	})
	return s.Value, err
}

// memcpy is Go's copy (runtime memmove, the copy Savanna's stack does)
// of size bytes of warm data, repeated.
func memcpy(size int) Bench {
	return Bench{Name: fmt.Sprintf("memcpy_%d", size), Unit: "ns/byte",
		What: fmt.Sprintf("copy() of %d bytes of warm (cached) data, repeated, thread CPU time per byte", size),
		Run: func(scale float64) (Sample, error) {
			src, dst := make([]byte, size), make([]byte, size)
			for i := range src {
				src[i] = byte(i)
			}
			v, err := perByte(scale, size, func() error { copy(dst, src); return nil })
			runtime.KeepAlive(dst)
			return Sample{Value: v}, err
		}}
}

// internetChecksum is stack/checksum's RFC 1071 sum (the one the stack
// runs when the NIC does not offload) over a 1500-byte packet.
func internetChecksum() Bench {
	const size = 1500
	return Bench{Name: "checksum_1500", Unit: "ns/byte",
		What: "stack/checksum.Checksum (RFC 1071) over 1500 bytes, repeated, thread CPU time per byte",
		Run: func(scale float64) (Sample, error) {
			buf := corpus(size)
			var acc uint64
			v, err := perByte(scale, size, func() error { acc += uint64(checksum.Checksum(buf)); return nil })
			sinkU64(acc)
			return Sample{Value: v}, err
		}}
}

// crc32IEEE is hash/crc32's IEEE CRC-32 (zlib's polynomial; Go uses the
// CPU's carry-less multiply where it has one) over 64 KiB.
func crc32IEEE() Bench {
	const size = 64 << 10
	return Bench{Name: "crc32", Unit: "ns/byte",
		What: "hash/crc32.ChecksumIEEE over 64 KiB, repeated, thread CPU time per byte",
		Run: func(scale float64) (Sample, error) {
			buf := corpus(size)
			var acc uint64
			v, err := perByte(scale, size, func() error { acc += uint64(crc32.ChecksumIEEE(buf)); return nil })
			sinkU64(acc)
			return Sample{Value: v}, err
		}}
}

// corpusSize is the compression corpus's size.
const corpusSize = 1 << 20

// deflateLevel is klauspost/compress/flate at level, the software path
// zlibshim runs (zlibshim/swpath.go), compressing the corpus.
func deflateLevel(level int) Bench {
	return Bench{Name: fmt.Sprintf("deflate_l%d", level), Unit: "ns/input byte",
		What: fmt.Sprintf("github.com/klauspost/compress/flate level %d (zlibshim's software path) over a 1 MiB text-like corpus, thread CPU time per input byte", level),
		Run: func(scale float64) (Sample, error) {
			data := corpus(corpusSize)
			var out bytes.Buffer
			w, err := flate.NewWriter(&out, level)
			if err != nil {
				return Sample{}, fmt.Errorf("flate level %d: %w", level, err)
			}
			v, err := perByte(scale, len(data), func() error {
				out.Reset()
				w.Reset(&out)
				if _, err := w.Write(data); err != nil {
					return fmt.Errorf("flate level %d: %w", level, err)
				}
				if err := w.Close(); err != nil {
					return fmt.Errorf("flate level %d: %w", level, err)
				}
				return nil
			})
			ratio := float64(len(data)) / float64(max(1, out.Len()))
			return Sample{Value: v, Extra: map[string]float64{"ratio": ratio}}, err
		}}
}

// inflateBench is internal/inflate, the decoder zlibshim's software
// Inflate and the QAT model share, decoding the corpus compressed at
// level 6.
func inflateBench() Bench {
	return Bench{Name: "inflate", Unit: "ns/output byte",
		What: "internal/inflate (zlibshim's software inflate) decoding the corpus deflated at level 6, thread CPU time per output byte",
		Run: func(scale float64) (Sample, error) {
			data := corpus(corpusSize)
			var packed bytes.Buffer
			w, err := flate.NewWriter(&packed, 6)
			if err != nil {
				return Sample{}, err
			}
			if _, err := w.Write(data); err != nil {
				return Sample{}, err
			}
			if err := w.Close(); err != nil {
				return Sample{}, err
			}
			src := packed.Bytes()
			dst := make([]byte, len(data)+1)
			var dec inflate.Decoder
			got := 0
			v, err := perByte(scale, len(data), func() error {
				dec.Reset()
				n, _, err := dec.Decode(dst, src)
				if err != nil {
					return fmt.Errorf("inflate: %w", err)
				}
				got = n
				return nil
			})
			if err == nil && (got != len(data) || !bytes.Equal(dst[:got], data)) {
				err = fmt.Errorf("inflate: decoded %d bytes, want the corpus's %d", got, len(data))
			}
			return Sample{Value: v}, err
		}}
}
