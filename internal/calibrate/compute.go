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

// perByte runs f passes times on a locked thread and returns the thread
// CPU time per byte, each pass handling bytes.
func perByte(passes, bytes int, f func()) (float64, error) {
	ns, err := perCall(passes, f)
	return ns / float64(bytes), err
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
			passes := iters(max(1, (256<<20)/size), scale)
			v, err := perByte(passes, size, func() { copy(dst, src) })
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
			v, err := perByte(iters(100_000, scale), size, func() { acc += uint64(checksum.Checksum(buf)) })
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
			v, err := perByte(iters(4000, scale), size, func() { acc += uint64(crc32.ChecksumIEEE(buf)) })
			sinkU64(acc)
			return Sample{Value: v}, err
		}}
}

// corpusSize is the compression corpus's size in a full run.
const corpusSize = 1 << 20

// deflateLevel is klauspost/compress/flate at level, the software path
// zlibshim runs (zlibshim/swpath.go), compressing the corpus.
func deflateLevel(level int) Bench {
	return Bench{Name: fmt.Sprintf("deflate_l%d", level), Unit: "ns/input byte",
		What: fmt.Sprintf("github.com/klauspost/compress/flate level %d (zlibshim's software path) over a 1 MiB text-like corpus, thread CPU time per input byte", level),
		Run: func(scale float64) (Sample, error) {
			data := corpus(max(64<<10, iters(corpusSize, scale)))
			var out bytes.Buffer
			w, err := flate.NewWriter(&out, level)
			if err != nil {
				return Sample{}, fmt.Errorf("flate level %d: %w", level, err)
			}
			var werr error
			v, err := perByte(2, len(data), func() {
				out.Reset()
				w.Reset(&out)
				if _, e := w.Write(data); e != nil {
					werr = e
				}
				if e := w.Close(); e != nil {
					werr = e
				}
			})
			if werr != nil {
				return Sample{}, fmt.Errorf("flate level %d: %w", level, werr)
			}
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
			data := corpus(max(64<<10, iters(corpusSize, scale)))
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
			var derr error
			got := 0
			v, err := perByte(8, len(data), func() {
				dec.Reset()
				n, _, e := dec.Decode(dst, src)
				got = n
				if e != nil {
					derr = e
				}
			})
			if derr != nil {
				return Sample{}, fmt.Errorf("inflate: %w", derr)
			}
			if got != len(data) || !bytes.Equal(dst[:got], data) {
				return Sample{}, fmt.Errorf("inflate: decoded %d bytes, want the corpus's %d", got, len(data))
			}
			return Sample{Value: v}, err
		}}
}
