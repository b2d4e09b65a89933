package zlibshim

import (
	"errors"
	"fmt"
	"io"
)

// Reader is an io.ReadCloser that decompresses from an underlying reader
// through an Inflater, a drop-in for compress/gzip's and compress/zlib's
// Reader. For gzip (and gzip-ext) it reads concatenated members as one
// stream, as gunzip and compress/gzip's multistream mode do.
type Reader struct {
	z      *Inflater
	r      io.Reader
	buf    []byte
	in     []byte
	eof    bool
	err    error
	closed bool
}

// readerBuf is the input buffer of a Reader.
const readerBuf = 32 << 10

// NewReader returns a Reader of format f. Like compress/gzip's NewReader
// it reads the header at once and returns its error (io.EOF for an empty
// input).
func (p *Process) NewReader(r io.Reader, f Format) (*Reader, error) {
	z, err := p.NewInflater(f)
	if err != nil {
		return nil, err
	}
	zr := &Reader{z: z, r: r, buf: make([]byte, readerBuf)}
	if err := zr.readHeader(); err != nil {
		_ = z.InflateEnd()
		return nil, err
	}
	return zr, nil
}

// Inflater returns the stream under the reader.
func (zr *Reader) Inflater() *Inflater { return zr.z }

// fill reads more input when none is left.
func (zr *Reader) fill() error {
	if len(zr.in) > 0 || zr.eof {
		return nil
	}
	n, err := zr.r.Read(zr.buf)
	zr.in = zr.buf[:n]
	switch {
	case errors.Is(err, io.EOF):
		zr.eof = true
	case err != nil:
		return fmt.Errorf("zlibshim: reading compressed input: %w", err)
	}
	return nil
}

// readHeader parses the stream header before any data is asked for.
func (zr *Reader) readHeader() error {
	for !zr.z.header {
		if err := zr.fill(); err != nil {
			return err
		}
		if zr.eof && len(zr.in) == 0 && len(zr.z.carry) == 0 {
			if zr.z.TotalIn == 0 {
				return io.EOF
			}
			return io.ErrUnexpectedEOF
		}
		zr.z.NextIn, zr.z.NextOut = zr.in, nil
		err := zr.z.Inflate(NoFlush)
		zr.in = zr.z.NextIn
		if err != nil && !errors.Is(err, ErrBuf) {
			return err
		}
	}
	return nil
}

// moreInput reports whether input follows the current stream.
func (zr *Reader) moreInput() (bool, error) {
	for len(zr.z.carry) == 0 && len(zr.in) == 0 && !zr.eof {
		if err := zr.fill(); err != nil {
			return false, err
		}
	}
	return len(zr.z.carry) > 0 || len(zr.in) > 0, nil
}

// Read decompresses into p.
func (zr *Reader) Read(p []byte) (int, error) {
	if zr.err != nil {
		return 0, zr.err
	}
	if zr.closed {
		return 0, fmt.Errorf("zlibshim: read from closed Reader: %w", ErrStream)
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if err := zr.fill(); err != nil {
			zr.err = err
			return 0, err
		}
		zr.z.NextIn, zr.z.NextOut = zr.in, p
		err := zr.z.Inflate(NoFlush)
		n := len(p) - len(zr.z.NextOut)
		zr.in = zr.z.NextIn
		switch {
		case errors.Is(err, ErrStreamEnd):
			more := false
			if zr.z.cur == FormatGzip {
				var ferr error
				if more, ferr = zr.moreInput(); ferr != nil {
					zr.err = ferr
					return n, ferr
				}
			}
			if !more {
				zr.err = io.EOF
				return n, io.EOF
			}
			// The next gzip member.
			_ = zr.z.InflateReset()
			zr.z.cur = FormatGzip
			if n > 0 {
				return n, nil
			}
		case err == nil || errors.Is(err, ErrBuf):
			if n > 0 {
				return n, nil
			}
			if zr.eof && len(zr.in) == 0 {
				zr.err = fmt.Errorf("zlibshim: compressed input truncated: %w", io.ErrUnexpectedEOF)
				return 0, zr.err
			}
		default:
			zr.err = err
			return n, err
		}
	}
}

// Close ends the stream (InflateEnd). It does not close the underlying
// reader, as compress/gzip's Close does not.
func (zr *Reader) Close() error {
	if zr.closed {
		return nil
	}
	zr.closed = true
	return zr.z.InflateEnd()
}

// Reset makes the Reader read a new stream from r, as compress/gzip's
// Reset does.
func (zr *Reader) Reset(r io.Reader) error {
	if zr.closed {
		zr.z.entry = zr.z.p.register(KindInflate)
		zr.z.entry.release = func() {}
		zr.z.ended = false
		zr.closed = false
	}
	zr.r, zr.in, zr.eof, zr.err = r, nil, false, nil
	zr.z.carry = zr.z.carry[:0]
	zr.z.TotalIn, zr.z.TotalOut = 0, 0
	zr.z.reset()
	return zr.readHeader()
}
