package qat

import (
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/savanna-sim/savanna/internal/adler"

	"github.com/klauspost/compress/flate"
	"github.com/savanna-sim/savanna/hw"
)

// codec produces a device's bytes: deflate by klauspost/compress at the
// hardware's level (dynamic Huffman), by fixedEncoder (fixed Huffman), or
// a copy (the null algorithm); inflate by the resumable inflater.
type codec struct {
	writers  [10]*flate.Writer // by hardware level
	windowed [16]*flate.Writer // by window log below 15
	fixed    *fixedEncoder
	out      spaceWriter
	scratch  *inflater // stateless decompression
	memo     *deflateMemo
}

func newCodec() *codec { return &codec{memo: newDeflateMemo()} }

// errOutOfSpace is what spaceWriter returns when the destination is full.
var errOutOfSpace = errors.New("destination full")

// spaceWriter writes into a fixed destination and fails when it is full,
// as the device does when an op's destination is too small.
type spaceWriter struct {
	dst  []byte
	n    int
	full bool
}

func (w *spaceWriter) reset(dst []byte) { *w = spaceWriter{dst: dst} }

func (w *spaceWriter) Write(p []byte) (int, error) {
	if w.full || len(w.dst)-w.n < len(p) {
		w.full = true
		return 0, errOutOfSpace
	}
	w.n += copy(w.dst[w.n:], p)
	return len(p), nil
}

// invalid marks an op as one the device does not support.
func invalid(op *hw.CompOp, format string, args ...any) (int, int) {
	op.Status = hw.StatusInvalidArgs
	op.Consumed, op.Produced = 0, 0
	op.Debug = fmt.Sprintf(format, args...)
	return 0, 0
}

// checkCommon validates what compression and decompression share.
func checkCommon(op *hw.CompOp) bool {
	switch {
	case op.Xform.Algo != hw.AlgoDeflate && op.Xform.Algo != hw.AlgoNull:
		invalid(op, "algorithm %d not supported", op.Xform.Algo)
	case op.Xform.Checksum == hw.ChecksumCRC32Adler32:
		invalid(op, "combined CRC32+Adler-32 needs a 64-bit checksum field")
	case op.Xform.Checksum < hw.ChecksumNone || op.Xform.Checksum > hw.ChecksumCRC32Adler32:
		invalid(op, "checksum type %d unknown", op.Xform.Checksum)
	case op.Xform.WindowLog != 0 && (op.Xform.WindowLog < 8 || op.Xform.WindowLog > 15):
		invalid(op, "window_log %d not in 8..15", op.Xform.WindowLog)
	default:
		return true
	}
	return false
}

// compress runs a stateless compression op and returns the bytes in and
// out. The output of an op with FlushSync or FlushFull ends at a byte
// boundary without a final block, so outputs of successive ops join into
// one raw deflate stream; FlushFinal ends the stream.
func (c *codec) compress(op *hw.CompOp, gen Generation) (int, int) {
	op.Debug = ""
	if !checkCommon(op) {
		return 0, 0
	}
	level := op.Xform.Level
	if level == -1 {
		level = 6 // Z_DEFAULT_COMPRESSION
	}
	switch {
	case op.Type != hw.OpStateless:
		return invalid(op, "stateful compression not supported (QAT's zlib shims compress stateless ops)")
	case level < 1 || level > 9:
		return invalid(op, "level %d not in 1..9", op.Xform.Level)
	case op.Flush != hw.FlushSync && op.Flush != hw.FlushFull && op.Flush != hw.FlushFinal:
		return invalid(op, "flush %d not allowed on a stateless op (sync, full or final)", op.Flush)
	case op.Xform.Huffman < hw.HuffmanDefault || op.Xform.Huffman > hw.HuffmanDynamic:
		return invalid(op, "huffman %d unknown", op.Xform.Huffman)
	}
	c.out.reset(op.Dst)
	var err error
	switch {
	case op.Xform.Algo == hw.AlgoNull:
		_, err = c.out.Write(op.Src)
	case op.Xform.Huffman == hw.HuffmanFixed:
		if c.fixed == nil {
			c.fixed = newFixedEncoder()
		}
		err = c.fixed.encode(&c.out, op.Src, windowLog(op.Xform.WindowLog), op.Flush == hw.FlushFinal)
	default:
		err = c.deflate(op, HardwareLevel(gen, level), windowLog(op.Xform.WindowLog))
	}
	switch {
	case errors.Is(err, errOutOfSpace) || c.out.full:
		op.Status = hw.StatusOutOfSpaceTerminated
		op.Consumed, op.Produced = 0, 0
		op.Debug = fmt.Sprintf("destination of %d bytes too small for the output of %d input bytes", len(op.Dst), len(op.Src))
		return len(op.Src), 0
	case err != nil:
		op.Status = hw.StatusError
		op.Consumed, op.Produced = 0, 0
		op.Debug = "compressor: " + err.Error()
		return len(op.Src), 0
	}
	op.Status = hw.StatusSuccess
	op.Consumed, op.Produced = len(op.Src), c.out.n
	op.Checksum = checksum(op.Xform.Checksum, op.InputChecksum, op.Src)
	return op.Consumed, op.Produced
}

// deflate compresses op.Src into c.out with klauspost's writer, or copies
// the memo's output of the same compression. The device fails an op whose
// output does not fit its destination; spaceWriter fails exactly when the
// whole output is longer than the destination, so a remembered output
// longer than op.Dst fails the same way.
func (c *codec) deflate(op *hw.CompOp, level, wl int) error {
	final := op.Flush == hw.FlushFinal
	klevel := level
	if wl < 15 {
		klevel = 0 // the windowed encoder has no level
	}
	k := c.memo.key(klevel, wl, final, op.Src)
	if out, ok := c.memo.get(k); ok {
		_, err := c.out.Write(out)
		return err
	}
	w, err := c.writer(level, wl)
	if err != nil {
		return err
	}
	w.Reset(&c.out)
	if _, err = w.Write(op.Src); err == nil {
		if final {
			err = w.Close()
		} else {
			err = w.Flush()
		}
	}
	if err == nil && !c.out.full {
		c.memo.put(k, c.out.dst[:c.out.n])
	}
	return err
}

// windowLog returns the effective window log (0 means 15).
func windowLog(wl int) int {
	if wl == 0 {
		return 15
	}
	return wl
}

// writer returns the reusable deflate writer of a level, or for a window
// smaller than 32 KiB klauspost's windowed encoder (its only encoder that
// bounds distances below 32 KiB).
func (c *codec) writer(level, wl int) (*flate.Writer, error) {
	if wl < 15 {
		if c.windowed[wl] == nil {
			w, err := flate.NewWriterWindow(nil, 1<<wl)
			if err != nil {
				return nil, err
			}
			c.windowed[wl] = w
		}
		return c.windowed[wl], nil
	}
	if c.writers[level] == nil {
		w, err := flate.NewWriter(nil, level)
		if err != nil {
			return nil, err
		}
		c.writers[level] = w
	}
	return c.writers[level], nil
}

// decompress runs a decompression op: stateful ops continue the queue
// pair's stream (inf), stateless ones decode a stream of their own. It
// returns the bytes in and out.
func (c *codec) decompress(inf *inflater, op *hw.CompOp) (int, int) {
	op.Debug = ""
	if !checkCommon(op) {
		return 0, 0
	}
	if op.Xform.Algo == hw.AlgoNull {
		if len(op.Dst) < len(op.Src) {
			op.Status = hw.StatusOutOfSpaceTerminated
			op.Consumed, op.Produced = 0, 0
			op.Debug = "destination too small"
			return 0, 0
		}
		n := copy(op.Dst, op.Src)
		op.Status, op.Consumed, op.Produced = hw.StatusSuccess, n, n
		op.Checksum = checksum(op.Xform.Checksum, op.InputChecksum, op.Src)
		return n, n
	}
	stateless := op.Type == hw.OpStateless
	if stateless {
		if c.scratch == nil {
			c.scratch = newInflater()
		}
		inf = c.scratch
		inf.reset()
	}
	res := inf.inflate(op.Src, op.Dst)
	op.Consumed, op.Produced = res.consumed, res.produced
	op.Checksum = checksum(op.Xform.Checksum, op.InputChecksum, op.Dst[:res.produced])
	switch {
	case res.err != nil:
		op.Status = hw.StatusError
		op.Debug = "corrupt deflate stream: " + res.reason
		inf.reset()
	case res.outFull && stateless:
		op.Status = hw.StatusOutOfSpaceTerminated
		op.Consumed, op.Produced = 0, 0
		op.Debug = fmt.Sprintf("destination of %d bytes too small", len(op.Dst))
	case res.outFull:
		op.Status = hw.StatusOutOfSpaceRecoverable
		op.Debug = fmt.Sprintf("destination of %d bytes full; resubmit from byte %d of the source", len(op.Dst), res.consumed)
	case stateless && !res.done && op.Flush == hw.FlushFinal:
		op.Status = hw.StatusError
		op.Debug = "deflate stream ends before its final block"
	default:
		op.Status = hw.StatusSuccess
	}
	return op.Consumed, op.Produced
}

// checksum is the CRC32 or Adler-32 of p, continuing from seed (an
// Adler-32 seed of 0 means a new stream, whose Adler-32 starts at 1).
func checksum(kind hw.ChecksumType, seed uint32, p []byte) uint32 {
	switch kind {
	case hw.ChecksumCRC32:
		return crc32.Update(seed, crc32.IEEETable, p)
	case hw.ChecksumAdler32:
		if seed == 0 {
			seed = 1
		}
		return adler.Update(seed, p)
	}
	return 0
}
