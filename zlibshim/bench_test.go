package zlibshim_test

import (
	stdgzip "compress/gzip"
	"io"
	"runtime"
	"syscall"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/zlibshim"
)

// benchInput is the same mixed input for every compressor: the text,
// HTML, JSON and binary items of the corpus, about 570 KB.
func benchInput() []byte {
	var in []byte
	for _, it := range corpus(false)[:4] {
		in = append(in, it.data...)
	}
	return in
}

// BenchmarkSoftwareGzip compares the shim's software path with plain
// klauspost/compress and the standard library at levels 1 and 6, writing
// the same input in 16 KiB writes (a web server's body chunks).
func BenchmarkSoftwareGzip(b *testing.B) {
	in := benchInput()
	write := func(b *testing.B, w io.Writer) {
		for off := 0; off < len(in); off += 16 << 10 {
			if _, err := w.Write(in[off:min(len(in), off+16<<10)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, level := range []int{1, 6} {
		name := map[int]string{1: "L1", 6: "L6"}[level]
		b.Run(name+"/stdlib", func(b *testing.B) {
			w, _ := stdgzip.NewWriterLevel(io.Discard, level)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			cpuLoop(b, len(in), func() {
				w.Reset(io.Discard)
				write(b, w)
				_ = w.Close()
			})
		})
		b.Run(name+"/klauspost", func(b *testing.B) {
			w, _ := kgzip.NewWriterLevel(io.Discard, level)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			cpuLoop(b, len(in), func() {
				w.Reset(io.Discard)
				write(b, w)
				_ = w.Close()
			})
		})
		b.Run(name+"/shim-software-only", func(b *testing.B) {
			p, _ := zlibshim.NewProcess(nil, 1, &hw.CountingMeter{}, zlibshim.Config{Policy: zlibshim.PolicySoftwareOnly})
			w, _ := p.NewWriterLevel(io.Discard, zlibshim.FormatGzip, level)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			cpuLoop(b, len(in), func() {
				w.Reset(io.Discard)
				write(b, w)
				_ = w.Close()
			})
		})
		b.Run(name+"/shim-failover-no-instance", func(b *testing.B) {
			// Failover with the hardware gone: requests of 64 KiB, each
			// tried on hardware after the backoff, served in software.
			m := &hw.CountingMeter{}
			svc := newFake(m)
			svc.noInstance = true
			p, _ := zlibshim.NewProcess(svc, 1, m, zlibshim.Config{})
			w, _ := p.NewWriterLevel(io.Discard, zlibshim.FormatGzip, level)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			cpuLoop(b, len(in), func() {
				w.Reset(io.Discard)
				write(b, w)
				_ = w.Close()
			})
		})
	}
}

// BenchmarkInflate measures the shim's Reader against compress/gzip's on
// the same gzip stream.
func BenchmarkInflate(b *testing.B) {
	in := benchInput()
	p, _ := zlibshim.NewProcess(nil, 1, &hw.CountingMeter{}, zlibshim.Config{})
	var comp []byte
	{
		var buf sliceWriter
		w, _ := p.NewWriterLevel(&buf, zlibshim.FormatGzip, 6)
		_, _ = w.Write(in)
		_ = w.Close()
		comp = buf.b
	}
	b.Run("stdlib", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			r, _ := stdgzip.NewReader(&sliceReader{b: comp})
			_, _ = io.Copy(io.Discard, r)
		}
	})
	b.Run("shim", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			r, _ := p.NewReader(&sliceReader{b: comp}, zlibshim.FormatGzip)
			_, _ = io.Copy(io.Discard, r)
			_ = r.Close()
		}
	})
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

type sliceReader struct{ b []byte }

func (r *sliceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// threadCPU is the CPU time of the calling OS thread (getrusage
// RUSAGE_THREAD), which the machine's other load does not inflate as it
// does wall-clock time.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// cpuLoop runs f b.N times on one locked thread and reports, beside the
// wall-clock figures, the thread's CPU time per op and the MB/s it
// implies: the figures to compare on a shared machine.
func cpuLoop(b *testing.B, bytes int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	cpu := threadCPU() - start
	if n > 0 && cpu > 0 {
		b.ReportMetric(float64(cpu)/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(bytes)*float64(n)/(float64(cpu)/1e9)/1e6, "cpu-MB/s")
	}
}

// BenchmarkShimOverhead alternates plain klauspost/compress gzip and the
// shim's software path on the same input within each iteration, timing
// each by thread CPU, and reports their ratio: the shim's overhead with
// the machine's drift cancelled out.
func BenchmarkShimOverhead(b *testing.B) {
	in := benchInput()
	write := func(w io.Writer) {
		for off := 0; off < len(in); off += 16 << 10 {
			_, _ = w.Write(in[off:min(len(in), off+16<<10)])
		}
	}
	for _, level := range []int{1, 6} {
		b.Run(map[int]string{1: "L1", 6: "L6"}[level], func(b *testing.B) {
			kw, _ := kgzip.NewWriterLevel(io.Discard, level)
			p, _ := zlibshim.NewProcess(nil, 1, &hw.CountingMeter{}, zlibshim.Config{Policy: zlibshim.PolicySoftwareOnly})
			sw, _ := p.NewWriterLevel(io.Discard, zlibshim.FormatGzip, level)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var kcpu, scpu int64
			b.SetBytes(int64(2 * len(in)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// Alternate which goes first, so neither always gets the
				// warmer cache.
				for j := range 2 {
					t0 := threadCPU()
					if (i+j)%2 == 0 {
						kw.Reset(io.Discard)
						write(kw)
						_ = kw.Close()
						kcpu += threadCPU() - t0
					} else {
						sw.Reset(io.Discard)
						write(sw)
						_ = sw.Close()
						scpu += threadCPU() - t0
					}
				}
			}
			if kcpu > 0 {
				b.ReportMetric(float64(scpu)/float64(kcpu), "shim/klauspost")
			}
		})
	}
}
