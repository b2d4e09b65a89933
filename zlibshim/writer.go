package zlibshim

import (
	"fmt"
	"io"
)

// Writer is an io.WriteCloser that compresses to an underlying writer
// through a Deflater, a drop-in for compress/gzip's and compress/zlib's
// Writer (Write, Flush, Close, Reset).
type Writer struct {
	d      *Deflater
	w      io.Writer
	err    error
	closed bool
}

// NewWriter returns a Writer of format f at the default level.
func (p *Process) NewWriter(w io.Writer, f Format) *Writer {
	zw, _ := p.NewWriterLevel(w, f, DefaultCompression) // cannot fail at the default level
	return zw
}

// NewWriterLevel returns a Writer of format f at level (-1..9).
func (p *Process) NewWriterLevel(w io.Writer, f Format, level int) (*Writer, error) {
	d, err := p.NewDeflater(DeflateOptions{Format: f, Level: level})
	if err != nil {
		return nil, err
	}
	return &Writer{d: d, w: w}, nil
}

// Deflater returns the stream under the writer.
func (z *Writer) Deflater() *Deflater { return z.d }

// Write compresses p. As with compress/gzip, output may stay buffered
// until Flush or Close.
func (z *Writer) Write(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if z.closed {
		return 0, fmt.Errorf("zlibshim: write to closed Writer: %w", ErrStream)
	}
	z.d.p.touch(z.d.entry)
	done := 0
	for done < len(p) {
		n, err := z.d.consume(p[done:], false) // Close comes later
		done += n
		z.d.TotalIn += int64(n)
		if err == nil {
			err = z.emit()
		}
		if err != nil {
			z.err = err
			return done, err
		}
	}
	return done, nil
}

// emit writes pending output to the underlying writer.
func (z *Writer) emit() error {
	if z.d.pending() == 0 {
		return nil
	}
	if _, err := z.w.Write(z.d.takeOut()); err != nil {
		return fmt.Errorf("zlibshim: writing compressed output: %w", err)
	}
	return nil
}

// Flush compresses what is buffered and writes it with a sync flush, as
// compress/gzip's Flush does (Z_SYNC_FLUSH).
func (z *Writer) Flush() error { return z.flushMode(SyncFlush) }

// FullFlush is Flush with a history reset (Z_FULL_FLUSH): a point a
// reader can restart from.
func (z *Writer) FullFlush() error { return z.flushMode(FullFlush) }

func (z *Writer) flushMode(f Flush) error {
	if z.err != nil {
		return z.err
	}
	if z.closed {
		return nil
	}
	z.d.p.touch(z.d.entry)
	if err := z.d.flush(f); err != nil {
		z.err = err
		return err
	}
	if err := z.emit(); err != nil {
		z.err = err
		return err
	}
	return nil
}

// Close finishes the stream, writes the trailer and returns the stream's
// pinned memory and instance (the DeflateEnd Tengine's fix calls). It
// does not close the underlying writer.
func (z *Writer) Close() error {
	if z.closed {
		return z.err
	}
	if z.err == nil {
		z.d.p.touch(z.d.entry)
		if err := z.d.flush(Finish); err != nil {
			z.err = err
		} else if err := z.emit(); err != nil {
			z.err = err
		}
	}
	z.closed = true
	if err := z.d.DeflateEnd(); err != nil && z.err == nil {
		z.err = err
	}
	return z.err
}

// Reset discards the writer's state and makes it write to w, as
// compress/gzip's Reset does; a closed Writer is reopened.
func (z *Writer) Reset(w io.Writer) {
	z.w, z.err = w, nil
	if z.closed {
		z.d.reopen()
		z.closed = false
		return
	}
	z.d.reset()
}

// reopen registers an ended stream again for reuse.
func (d *Deflater) reopen() {
	d.entry = d.p.register(KindDeflate)
	d.entry.release = d.release
	d.ended = false
	d.reset()
}
