package zlibshim

import (
	"io"

	"github.com/klauspost/compress/flate"
)

// maxIdleWriters bounds the pool of each level.
const maxIdleWriters = 8

// takeWriter returns a software compressor at level writing to sink,
// from the pool when it has one.
func (p *Process) takeWriter(level int, sink io.Writer) *flate.Writer {
	i := level + 2
	if n := len(p.writers[i]); n > 0 {
		w := p.writers[i][n-1]
		p.writers[i] = p.writers[i][:n-1]
		w.Reset(sink)
		return w
	}
	w, err := flate.NewWriter(sink, level)
	if err != nil {
		// Unreachable: levels come from swLevel, always in -2..9.
		w, _ = flate.NewWriter(sink, flate.DefaultCompression)
	}
	return w
}

// putWriter returns a compressor to the pool.
func (p *Process) putWriter(level int, w *flate.Writer) {
	i := level + 2
	if len(p.writers[i]) < maxIdleWriters {
		w.Reset(nil)
		p.writers[i] = append(p.writers[i], w)
	}
}
