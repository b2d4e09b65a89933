package zlibshim_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/zlibshim"
)

// FuzzInflate feeds corrupt (and valid) zlib, gzip and raw streams to
// the shim's Inflate in pieces: it must never panic, every error must be
// one of zlib's meanings, and whatever Go's readers accept it must decode
// to the same bytes.
func FuzzInflate(f *testing.F) {
	p, _ := zlibshim.NewProcess(nil, 1, &hw.CountingMeter{}, zlibshim.Config{})
	for i, format := range []zlibshim.Format{zlibshim.FormatRaw, zlibshim.FormatZlib, zlibshim.FormatGzip, zlibshim.FormatGzipExt} {
		var b bytes.Buffer
		w, _ := p.NewWriterLevel(&b, format, 1+i*2)
		_, _ = w.Write(bytes.Repeat([]byte("fuzz the inflate path with corrupt streams. "), 30))
		_ = w.Flush()
		_, _ = w.Write([]byte("more"))
		_ = w.Close()
		f.Add(b.Bytes(), uint8(format), uint64(i))
	}
	f.Add([]byte{0x1f, 0x8b, 8, 0x1c, 0, 0, 0, 0, 0, 3, 'n', 0, 'c', 0}, uint8(zlibshim.FormatGzip), uint64(9))
	f.Add([]byte{0x78, 0x9c, 0x03, 0x00, 0, 0, 0, 1}, uint8(zlibshim.FormatZlib), uint64(10))
	f.Fuzz(func(t *testing.T, src []byte, fsel uint8, seed uint64) {
		format := zlibshim.Format(fsel % 5)
		if format == zlibshim.FormatGzipExt {
			format = zlibshim.FormatAuto
		}
		p, _ := zlibshim.NewProcess(nil, 1, &hw.CountingMeter{}, zlibshim.Config{})
		z, err := p.NewInflater(format)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 1))
		var got []byte
		in := src
		buf := make([]byte, 1024)
		ended := false
		for steps := 0; steps < 1<<20 && len(got) < 1<<18; steps++ {
			piece := in[:min(len(in), r.IntN(100))]
			z.NextIn = piece
			z.NextOut = buf[:1+r.IntN(len(buf))]
			before := len(z.NextOut)
			err := z.Inflate(zlibshim.NoFlush)
			got = append(got, buf[:before-len(z.NextOut)]...)
			in = in[len(piece)-len(z.NextIn):]
			if errors.Is(err, zlibshim.ErrStreamEnd) {
				ended = true
				break
			}
			if err != nil && !errors.Is(err, zlibshim.ErrBuf) {
				if !errors.Is(err, zlibshim.ErrData) {
					t.Fatalf("error %v is not ErrData", err)
				}
				break
			}
			if len(in) == 0 && errors.Is(err, zlibshim.ErrBuf) {
				break
			}
		}
		_ = z.InflateEnd()
		want, werr := goRead(format, src)
		if werr == nil && len(want) < 1<<18 {
			if !ended {
				t.Fatalf("Go's reader decoded %d bytes; the shim did not reach the end", len(want))
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("output differs from Go's reader (%d vs %d bytes)", len(got), len(want))
			}
		}
	})
}

// goRead decodes one stream (one gzip member) with Go's readers.
func goRead(format zlibshim.Format, src []byte) ([]byte, error) {
	var r io.Reader
	switch {
	case format == zlibshim.FormatZlib, format == zlibshim.FormatAuto && len(src) > 0 && src[0] != 0x1f:
		zr, err := zlib.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		r = zr
	case format == zlibshim.FormatGzip, format == zlibshim.FormatAuto:
		gr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		gr.Multistream(false)
		r = gr
	default:
		return nil, errors.New("raw: compared in package inflate")
	}
	return io.ReadAll(io.LimitReader(r, 1<<18))
}
