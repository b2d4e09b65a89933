package zlibshim

import (
	"encoding/binary"
	"fmt"

	"github.com/savanna-sim/savanna/internal/adler"

	"github.com/savanna-sim/savanna/internal/inflate"
)

// Inflater is a decompression stream, zlib's z_stream for inflate, with
// NextIn/NextOut as Deflater has them. Decompression runs in software
// (package inflate, a resumable decoder: zlib's push shape needs one).
type Inflater struct {
	NextIn   []byte
	NextOut  []byte
	TotalIn  int64
	TotalOut int64

	p      *Process
	entry  *streamEntry
	format Format // as asked; FormatAuto resolves per stream
	cur    Format
	window int

	st     inflateState
	hdr    []byte
	trl    []byte
	carry  []byte // bytes taken in but not yet used by the current stage
	dec    *inflate.Decoder
	sum    uint32
	size   uint32
	err    error
	ended  bool
	header bool // the header has been parsed
}

type inflateState uint8

const (
	infHeader inflateState = iota
	infBody
	infTrailer
	infEnd
)

// InflateInit2 starts a decompression stream as zlib's inflateInit2 does:
// windowBits 8..15 (zlib; 0 takes the header's), -8..-15 (raw), 24..31
// (gzip) or 40..47 (zlib or gzip, detected).
func (p *Process) InflateInit2(windowBits int) (*Inflater, error) {
	f, w, err := formatFromWindowBits(windowBits, true)
	if err != nil {
		return nil, fmt.Errorf("zlibshim: inflateInit2: %w", err)
	}
	return p.newInflater(f, w), nil
}

// InflateInit is zlib's inflateInit: the zlib format.
func (p *Process) InflateInit() (*Inflater, error) { return p.InflateInit2(MaxWBits) }

// NewInflater starts a decompression stream of format f (FormatGzipExt
// reads as gzip: its members are gzip members).
func (p *Process) NewInflater(f Format) (*Inflater, error) {
	if f < FormatRaw || f > FormatAuto {
		return nil, fmt.Errorf("zlibshim: inflate: format %d unknown: %w", f, ErrStream)
	}
	if f == FormatGzipExt {
		f = FormatGzip
	}
	return p.newInflater(f, MaxWBits), nil
}

func (p *Process) newInflater(f Format, window int) *Inflater {
	z := &Inflater{p: p, format: f, window: window, dec: new(inflate.Decoder)}
	z.entry = p.register(KindInflate)
	z.entry.release = func() {}
	z.reset()
	return z
}

func (z *Inflater) reset() {
	z.cur = z.format
	z.st, z.header = infHeader, false
	z.hdr, z.trl = z.hdr[:0], z.trl[:0]
	z.sum, z.size, z.err = 0, 0, nil
	if z.cur == FormatRaw {
		z.st, z.header = infBody, true
	}
	z.dec.Reset()
}

// input is where the current stage reads: bytes carried over first.
func (z *Inflater) input() []byte {
	if len(z.carry) > 0 {
		return z.carry
	}
	return z.NextIn
}

// advance consumes n bytes of what input returned.
func (z *Inflater) advance(n int) {
	if len(z.carry) > 0 {
		z.carry = z.carry[n:]
		return
	}
	z.NextIn = z.NextIn[n:]
	z.TotalIn += int64(n)
	z.p.stats.InflateBytesIn += uint64(n)
}

// Inflate decompresses as zlib's inflate does: it consumes NextIn and
// fills NextOut until one runs out or the stream ends. It returns nil
// (Z_OK) on progress, ErrStreamEnd at the end of the stream (of one gzip
// member: InflateReset and call again for the next, as with zlib), ErrBuf
// when no progress was possible, and an error wrapping ErrData for
// corrupt input (sticky). flush is accepted for zlib's shape; the stream
// decodes as far as it can whatever it is.
func (z *Inflater) Inflate(flush Flush) error {
	if z.ended {
		return fmt.Errorf("zlibshim: inflate after InflateEnd: %w", ErrStream)
	}
	if z.err != nil {
		return z.err
	}
	if flush < NoFlush || flush > Finish {
		return fmt.Errorf("zlibshim: inflate: flush %d unknown: %w", flush, ErrStream)
	}
	z.p.touch(z.entry)
	progress := false
	for {
		switch z.st {
		case infEnd:
			return ErrStreamEnd
		case infHeader:
			ok, moved, err := z.readHeader()
			progress = progress || moved
			if err != nil {
				return z.fail(err)
			}
			if !ok {
				return z.noProgress(progress)
			}
		case infBody:
			in := z.input()
			if len(z.NextOut) == 0 && !z.dec.Done() {
				return z.noProgress(progress)
			}
			nd, ns, err := z.dec.Decode(z.NextOut, in)
			out := z.NextOut[:nd]
			z.NextOut = z.NextOut[nd:]
			z.TotalOut += int64(nd)
			z.advance(ns)
			z.check(out)
			if nd > 0 || ns > 0 {
				progress = true
			}
			if err != nil {
				return z.fail(fmt.Errorf("deflate data: %w (%w)", err, ErrData))
			}
			if !z.dec.Done() {
				if len(z.input()) > 0 && len(z.NextOut) > 0 {
					continue
				}
				return z.noProgress(progress)
			}
			// The decoder may hold bytes past the stream: the trailer's.
			if rest := z.dec.Rest(); len(rest) > 0 {
				z.carry = append(append([]byte(nil), rest...), z.carry...)
			}
			z.st = infTrailer
		case infTrailer:
			need := 0
			switch z.cur {
			case FormatGzip:
				need = gzipTrailer
			case FormatZlib:
				need = zlibTrailer
			}
			for len(z.trl) < need {
				in := z.input()
				if len(in) == 0 {
					return z.noProgress(progress)
				}
				n := min(len(in), need-len(z.trl))
				z.trl = append(z.trl, in[:n]...)
				z.advance(n)
				progress = true
			}
			if err := z.verify(); err != nil {
				return z.fail(err)
			}
			z.st = infEnd
		}
	}
}

func (z *Inflater) noProgress(progress bool) error {
	if progress {
		return nil
	}
	return ErrBuf
}

func (z *Inflater) fail(err error) error {
	z.err = fmt.Errorf("zlibshim: inflate %v stream at input byte %d: %w", z.cur, z.TotalIn, err)
	z.p.stats.InflateErrors++
	return z.err
}

// readHeader gathers and parses the zlib or gzip header.
func (z *Inflater) readHeader() (ok, moved bool, err error) {
	for {
		var n int
		switch {
		case z.cur == FormatAuto && len(z.hdr) >= 1:
			if z.hdr[0] == gzipID1 {
				z.cur = FormatGzip
			} else {
				z.cur = FormatZlib
			}
			continue
		case z.cur == FormatAuto:
		case z.cur == FormatZlib:
			n, err = parseZlibHeader(z.hdr, z.window)
		default:
			n, err = parseGzipHeader(z.hdr)
		}
		if err != nil {
			return false, moved, err
		}
		if n > 0 {
			// Bytes gathered past the header are the body's.
			z.carry = append(append([]byte(nil), z.hdr[n:]...), z.carry...)
			z.hdr = z.hdr[:0]
			z.st, z.header = infBody, true
			z.sum = 0
			if z.cur == FormatZlib {
				z.sum = 1
			}
			return true, moved, nil
		}
		in := z.input()
		if len(in) == 0 {
			return false, moved, nil
		}
		if len(z.hdr) >= maxHeader {
			return false, moved, fmt.Errorf("gzip header longer than %d bytes: %w", maxHeader, ErrData)
		}
		take := min(len(in), 512)
		z.hdr = append(z.hdr, in[:take]...)
		z.advance(take)
		moved = true
	}
}

// check runs the wrapper's checksum over output and charges the work.
func (z *Inflater) check(out []byte) {
	if len(out) == 0 {
		return
	}
	m := z.p.meter
	m.Charge(CostInflateByte, int64(len(out)))
	z.p.stats.InflateBytesOut += uint64(len(out))
	z.size += uint32(len(out))
	switch z.cur {
	case FormatGzip:
		z.sum = crc32Update(z.sum, out)
	case FormatZlib:
		z.sum = adler.Update(z.sum, out)
	default:
		return
	}
	m.Charge(CostCRC32Byte, int64(len(out)))
}

// verify checks the trailer.
func (z *Inflater) verify() error {
	switch z.cur {
	case FormatGzip:
		crc, isize := binary.LittleEndian.Uint32(z.trl), binary.LittleEndian.Uint32(z.trl[4:])
		if crc != z.sum {
			return fmt.Errorf("gzip trailer: CRC-32 %08x, data has %08x: %w", crc, z.sum, ErrData)
		}
		if isize != z.size {
			return fmt.Errorf("gzip trailer: ISIZE %d, data has %d: %w", isize, z.size, ErrData)
		}
	case FormatZlib:
		if a := binary.BigEndian.Uint32(z.trl); a != z.sum {
			return fmt.Errorf("zlib trailer: Adler-32 %08x, data has %08x: %w", a, z.sum, ErrData)
		}
	}
	return nil
}

// Unused returns input the stream took in but did not use: after
// ErrStreamEnd, the start of whatever follows the stream. InflateReset
// keeps it as the next stream's first input.
func (z *Inflater) Unused() []byte { return z.carry }

// InflateReset starts a new stream with the same parameters, as zlib's
// inflateReset does; bytes taken in past the previous stream's end (see
// Unused) are kept as the new stream's first input.
func (z *Inflater) InflateReset() error {
	if z.ended {
		return fmt.Errorf("zlibshim: InflateReset after InflateEnd: %w", ErrStream)
	}
	z.reset()
	z.p.touch(z.entry)
	return nil
}

// InflateEnd ends the stream (zlib's inflateEnd).
func (z *Inflater) InflateEnd() error {
	if z.ended {
		return fmt.Errorf("zlibshim: InflateEnd called twice: %w", ErrStream)
	}
	z.ended = true
	z.p.unregister(z.entry)
	z.p.stats.StreamsEnded++
	return nil
}
