package zlibshim

import (
	"encoding/binary"
	"fmt"

	"github.com/savanna-sim/savanna/internal/adler"

	"github.com/savanna-sim/savanna/hw"
)

// Deflater is a compression stream, zlib's z_stream for deflate. Set
// NextIn to the input and NextOut to the space for output, call Deflate;
// it advances NextIn past what it consumed and NextOut past what it
// wrote (zlib's next_in/avail_in and next_out/avail_out in one slice
// each). TotalIn and TotalOut count over the stream's life.
type Deflater struct {
	NextIn   []byte
	NextOut  []byte
	TotalIn  int64
	TotalOut int64

	p        *Process
	entry    *streamEntry
	format   Format
	level    int
	strategy Strategy

	started  bool
	finished bool
	// finalSent says the stream's last request went out as the final one
	// (consume at Finish), so Finish has only the trailer left to write.
	finalSent bool
	ended     bool
	err       error
	lastFlush Flush
	dirty     bool

	// sum and size are the wrapper's running checksum (CRC-32 for gzip,
	// Adler-32 for zlib) and input length mod 2^32, across hardware and
	// software requests alike.
	sum  uint32
	size uint32

	// out[outOff:] is output not yet handed to the caller.
	out    []byte
	outOff int

	// stage gathers input up to a request (heap; copied into the pinned
	// buffer at submit).
	stage []byte
	// direct: software streaming, no requests (software-only policy).
	direct bool
	// members counts gzip-ext members written.
	members int

	sw   swState
	sink *outSink

	// Hardware: the stream's instance (when per stream) and pinned
	// buffers, and whether its parameters allow hardware at all.
	inst       hw.CompressInstance
	src, dst   *hw.PinnedBuffer
	hwEligible bool
	opv        [1]*hw.CompOp
}

// chunkEnd is how a request ends.
type chunkEnd int

const (
	endNone  chunkEnd = iota // a full request; more follows
	endSync                  // SyncFlush
	endFull                  // FullFlush
	endFinal                 // Finish
)

// DeflateOptions are DeflateInit2's parameters with the format named
// rather than folded into window bits, so that gzip-ext can be asked for.
type DeflateOptions struct {
	Format   Format
	Level    int
	Strategy Strategy
}

// DeflateInit2 starts a compression stream as zlib's deflateInit2 does:
// level -1..9, method Deflated, windowBits 8..15 (zlib), -8..-15 (raw) or
// 24..31 (gzip), memLevel 1..9 (accepted; the compressors size their own
// memory) and a strategy. The history window is always 32 KiB, which the
// zlib header says.
func (p *Process) DeflateInit2(level, method, windowBits, memLevel int, strategy Strategy) (*Deflater, error) {
	if method != Deflated {
		return nil, fmt.Errorf("zlibshim: deflateInit2: method %d is not Z_DEFLATED: %w", method, ErrStream)
	}
	if memLevel < 1 || memLevel > 9 {
		return nil, fmt.Errorf("zlibshim: deflateInit2: memLevel %d outside 1..9: %w", memLevel, ErrStream)
	}
	f, _, err := formatFromWindowBits(windowBits, false)
	if err != nil {
		return nil, fmt.Errorf("zlibshim: deflateInit2: %w", err)
	}
	return p.NewDeflater(DeflateOptions{Format: f, Level: level, Strategy: strategy})
}

// DeflateInit is zlib's deflateInit: the zlib format at a level.
func (p *Process) DeflateInit(level int) (*Deflater, error) {
	return p.NewDeflater(DeflateOptions{Format: FormatZlib, Level: level})
}

// NewDeflater starts a compression stream.
func (p *Process) NewDeflater(o DeflateOptions) (*Deflater, error) {
	if o.Level < DefaultCompression || o.Level > BestCompression {
		return nil, fmt.Errorf("zlibshim: deflate: level %d outside -1..9: %w", o.Level, ErrStream)
	}
	if o.Strategy < DefaultStrategy || o.Strategy > Fixed {
		return nil, fmt.Errorf("zlibshim: deflate: strategy %d unknown: %w", o.Strategy, ErrStream)
	}
	if o.Format < FormatRaw || o.Format > FormatGzipExt {
		return nil, fmt.Errorf("zlibshim: deflate: format %v cannot be written: %w", o.Format, ErrStream)
	}
	if o.Level == DefaultCompression {
		o.Level = 6
	}
	d := &Deflater{p: p, format: o.Format, level: o.Level, strategy: o.Strategy}
	d.sink = &outSink{d: d}
	d.entry = p.register(KindDeflate)
	d.entry.release = d.release
	d.hwEligible = o.Level > 0 && o.Strategy != HuffmanOnly && o.Strategy != RLE
	d.reset()
	return d, nil
}

// reset puts the stream back at its start, keeping its resources.
func (d *Deflater) reset() {
	d.NextIn, d.NextOut, d.TotalIn, d.TotalOut = nil, nil, 0, 0
	d.started, d.finished, d.finalSent, d.err = false, false, false, nil
	d.lastFlush, d.dirty = NoFlush, false
	d.size, d.sum = 0, 0
	if d.format == FormatZlib {
		d.sum = 1
	}
	d.out, d.outOff = d.out[:0], 0
	d.stage = d.stage[:0]
	d.members = 0
	d.sw.open = false
	d.sw.needReset = d.sw.w != nil
	// Software streaming needs no requests when hardware is out of the
	// question; gzip-ext needs them, one member each.
	d.direct = !d.p.hardwareAllowed() && d.format != FormatGzipExt
}

// Deflate compresses as zlib's deflate does: it consumes NextIn and fills
// NextOut until one runs out, and with a flush other than NoFlush
// flushes once all input is consumed. It returns nil (Z_OK) when progress
// was made, ErrStreamEnd once Finish has delivered all output, ErrBuf
// when no progress was possible, and ErrStream on misuse. Under the
// hardware-only policy a request the hardware cannot serve fails with an
// error wrapping ErrHardware.
func (d *Deflater) Deflate(flush Flush) error {
	if d.ended {
		return fmt.Errorf("zlibshim: deflate after DeflateEnd: %w", ErrStream)
	}
	if d.err != nil {
		return d.err
	}
	if flush < NoFlush || flush > Finish {
		return fmt.Errorf("zlibshim: deflate: flush %d unknown: %w", flush, ErrStream)
	}
	d.p.touch(d.entry)
	if len(d.NextOut) == 0 {
		// zlib's deflate: no room for output is a buffer error at once.
		return ErrBuf
	}
	if d.finished {
		if len(d.NextIn) > 0 {
			return fmt.Errorf("zlibshim: deflate: input after Finish: %w", ErrStream)
		}
		moved := d.drainOut()
		switch {
		case d.pending() == 0:
			return ErrStreamEnd
		case !moved:
			return ErrBuf
		}
		return nil
	}
	progress := false
	for {
		if d.drainOut() {
			progress = true
		}
		if d.pending() > 0 {
			break
		}
		if len(d.NextIn) > 0 {
			n, err := d.consume(d.NextIn, flush == Finish)
			d.NextIn = d.NextIn[n:]
			d.TotalIn += int64(n)
			if n > 0 {
				progress = true
			}
			if err != nil {
				d.err = err
				return err
			}
			continue
		}
		if flush != NoFlush && (d.dirty || flush != d.lastFlush) {
			if err := d.flush(flush); err != nil {
				d.err = err
				return err
			}
			progress = true
			continue // drain what the flush wrote
		}
		break
	}
	if d.finished && d.pending() == 0 {
		return ErrStreamEnd
	}
	if !progress {
		return ErrBuf
	}
	return nil
}

// pending is the output waiting for the caller.
func (d *Deflater) pending() int { return len(d.out) - d.outOff }

// drainOut moves pending output into NextOut and reports whether any
// moved.
func (d *Deflater) drainOut() bool {
	n := copy(d.NextOut, d.out[d.outOff:])
	d.NextOut = d.NextOut[n:]
	d.TotalOut += int64(n)
	d.outOff += n
	if d.outOff == len(d.out) {
		d.out, d.outOff = d.out[:0], 0
	}
	return n > 0
}

// takeOut hands the pending output to an io.Writer wrapper and forgets it.
func (d *Deflater) takeOut() []byte {
	b := d.out[d.outOff:]
	d.TotalOut += int64(len(b))
	d.out, d.outOff = d.out[:0], 0
	return b
}

// start writes the stream header once.
func (d *Deflater) start() {
	if d.started {
		return
	}
	d.started = true
	switch d.format {
	case FormatGzip:
		d.out = appendGzipHeader(d.out, d.level)
	case FormatZlib:
		h := zlibHeader(d.level, d.strategy)
		d.out = append(d.out, h[0], h[1])
	}
}

// consume takes input: into the software compressor when streaming
// directly, else into the staging buffer, submitting a request when it is
// full (or straight from in when in holds a whole request). At Finish
// (final), input that fits one request with nothing staged is the
// stream's last request and goes out as the final one: the device sees
// the stream end, as it does for zlib's deflate(Z_FINISH) with all input
// given, and no empty final block follows in software (which a page of
// an exact multiple of the request size would otherwise get).
func (d *Deflater) consume(in []byte, final bool) (int, error) {
	d.start()
	d.dirty, d.lastFlush = true, NoFlush
	rs := d.p.cfg.RequestSize
	if d.direct {
		n := min(len(in), rs)
		d.swWrite(in[:n])
		d.p.stats.SWRequests++
		return n, nil
	}
	if final && len(d.stage) == 0 && len(in) <= rs {
		d.finalSent = true
		return len(in), d.request(in, endFinal)
	}
	if len(d.stage) == 0 && len(in) >= rs {
		return rs, d.request(in[:rs], endNone)
	}
	n := min(len(in), rs-len(d.stage))
	d.stage = append(d.stage, in[:n]...)
	d.p.meter.Charge(hw.CostCopyByte, int64(n))
	if len(d.stage) < rs {
		return n, nil
	}
	err := d.request(d.stage, endNone)
	d.stage = d.stage[:0]
	return n, err
}

// flush ends what is staged with the flush asked for and, at Finish,
// writes the trailer.
func (d *Deflater) flush(f Flush) error {
	d.start()
	end := endSync
	switch f {
	case FullFlush:
		end = endFull
	case Finish:
		end = endFinal
	}
	var err error
	switch {
	case d.finalSent:
		// The last request ended the stream.
	case d.direct:
		d.swEnd(end)
	default:
		err = d.request(d.stage, end)
		d.stage = d.stage[:0]
	}
	if err != nil {
		return err
	}
	d.dirty, d.lastFlush = false, f
	if f == Finish {
		switch d.format {
		case FormatGzip:
			d.out = appendGzipTrailer(d.out, d.sum, d.size)
		case FormatZlib:
			d.out = binary.BigEndian.AppendUint32(d.out, d.sum)
		}
		d.finished = true
	}
	return nil
}

// request compresses one request's input, in hardware when the policy,
// the parameters, the size and the return rule allow and the hardware
// serves it, else in software.
func (d *Deflater) request(data []byte, end chunkEnd) error {
	if d.format == FormatGzipExt {
		return d.member(data, end)
	}
	if len(data) > 0 && d.wantHW(len(data)) {
		flag := hw.FlushFull
		if end == endFinal {
			flag = hw.FlushFinal
		}
		served, sum, hwSum, err := d.hwRequest(data, flag, d.checksumType(), d.sum)
		if err != nil {
			return err
		}
		if served {
			if hwSum {
				d.sum = sum
			} else {
				d.updateSum(data)
			}
			d.size += uint32(len(data))
			return nil
		}
	}
	if len(data) > 0 {
		d.swWrite(data)
		d.p.stats.SWRequests++
	}
	d.swEnd(end)
	return nil
}

// wantHW decides whether a request of n bytes goes to hardware.
func (d *Deflater) wantHW(n int) bool {
	p := d.p
	switch {
	case !p.hardwareAllowed():
		return false
	case !d.hwEligible:
		p.stats.UnsupportedRequests++
		return false
	case p.cfg.Policy == PolicyHardwareOnly:
		return true
	case n < p.cfg.SoftwareThreshold:
		p.stats.SmallRequests++
		return false
	}
	return p.admit()
}

// checksumType is the checksum the wrapper needs.
func (d *Deflater) checksumType() hw.ChecksumType {
	switch d.format {
	case FormatGzip, FormatGzipExt:
		return hw.ChecksumCRC32
	case FormatZlib:
		return hw.ChecksumAdler32
	}
	return hw.ChecksumNone
}

// updateSum runs the wrapper's checksum over data in software.
func (d *Deflater) updateSum(data []byte) {
	switch d.format {
	case FormatGzip:
		d.sum = crc32Update(d.sum, data)
	case FormatZlib:
		d.sum = adler.Update(d.sum, data)
	default:
		return
	}
	d.p.meter.Charge(CostCRC32Byte, int64(len(data)))
}

// release returns the stream's pinned memory and instance. It keeps the
// software compressor, which may hold input not yet flushed: ReclaimLeaked
// releases streams that may still be used.
func (d *Deflater) release() {
	p := d.p
	p.freePinned(d.src)
	p.freePinned(d.dst)
	d.src, d.dst = nil, nil
	d.entry.pinned = 0
	if d.inst != nil {
		p.detach(d.inst)
		d.inst = nil
		d.entry.inst = false
	}
}

// DeflateEnd frees the stream's resources (zlib's deflateEnd): its pinned
// memory and, when instances are per stream, its instance. Forgetting it
// is the seed's hugepage leak. It returns ErrData when the stream was
// started and not finished (output may have been discarded), as zlib's
// deflateEnd does, and ErrStream when called twice.
func (d *Deflater) DeflateEnd() error {
	if d.ended {
		return fmt.Errorf("zlibshim: DeflateEnd called twice: %w", ErrStream)
	}
	d.release()
	if d.sw.w != nil {
		d.p.putWriter(d.swLevel(), d.sw.w)
		d.sw.w, d.sw.open, d.sw.needReset = nil, false, false
	}
	d.p.unregister(d.entry)
	d.p.stats.StreamsEnded++
	d.ended = true
	if d.started && !d.finished {
		return fmt.Errorf("zlibshim: DeflateEnd: stream ended before Finish: %w", ErrData)
	}
	return nil
}

// DeflateReset starts the stream over with the same parameters, keeping
// its resources (zlib's deflateReset).
func (d *Deflater) DeflateReset() error {
	if d.ended {
		return fmt.Errorf("zlibshim: DeflateReset after DeflateEnd: %w", ErrStream)
	}
	d.reset()
	d.p.touch(d.entry)
	return nil
}
