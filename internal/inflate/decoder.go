package inflate

import (
	"errors"
	"fmt"
)

// ErrCorrupt is wrapped by every error about the compressed data.
var ErrCorrupt = errors.New("inflate: corrupt deflate data")

// CorruptError is the error of a corrupt stream. Reason names what was
// wrong, alone: a caller that reports its own context (the QAT model puts
// it in an op's debug string after its status) uses it without the
// "corrupt deflate data" prefix. It wraps ErrCorrupt.
type CorruptError struct {
	Reason string
}

func (e *CorruptError) Error() string { return ErrCorrupt.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Status says why the last call to Decode returned, for a caller that
// must tell "give me more input" from "give me room" (QAT's stateful
// decompression answers them with different op statuses).
type Status uint8

const (
	// NeedInput: all of src was taken in (some of it may be held inside
	// the decoder) and the stream goes on.
	NeedInput Status = iota
	// DstFull: the decoder needs room in dst to go on; src may be left.
	DstFull
	// StreamEnd: the final block has ended (Done); bytes after it are
	// not consumed, or are in Rest when the decoder had taken them in.
	StreamEnd
	// Corrupt: the data is corrupt; Decode returned the error.
	Corrupt
)

// String names the status for messages.
func (s Status) String() string {
	switch s {
	case NeedInput:
		return "need input"
	case DstFull:
		return "destination full"
	case StreamEnd:
		return "stream end"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

const (
	windowSize = 1 << 15
	windowMask = windowSize - 1
	// holdChunk is how much new input joins held bytes at a time; it
	// exceeds the longest step (a dynamic header: under 300 bytes).
	holdChunk = 1024
)

type state uint8

const (
	stHeader state = iota // next: a block header
	stStored              // inside a stored block
	stCodes               // inside a Huffman block
	stDone                // after the final block
)

// stop says why a run over the input ended.
type stop uint8

const (
	stopNeedInput stop = iota
	stopDstFull
	stopDone
	stopError
)

// status is what a caller is told of a stop.
func (s stop) status() Status {
	switch s {
	case stopDstFull:
		return DstFull
	case stopDone:
		return StreamEnd
	case stopError:
		return Corrupt
	}
	return NeedInput
}

// Decoder decodes one raw deflate stream, resumably. The zero value is
// ready to use.
type Decoder struct {
	st    state
	final bool
	bits  uint64
	nbits uint

	storedLeft int
	lit, dist  *huffman
	copyLen    int
	copyDist   int

	fixedLit, fixedDist huffman
	fixedBuilt          bool
	dynLit, dynDist     huffman
	clen                huffman
	lengths             [320]uint8

	hist  [windowSize]byte
	hpos  int
	total int64

	hold []byte
	rest []byte
	err  error

	status  Status
	maxDist int // farthest distance a match reached in this stream
}

// Reset prepares the decoder for a new stream, keeping its memory.
func (z *Decoder) Reset() {
	z.st, z.final, z.bits, z.nbits = stHeader, false, 0, 0
	z.storedLeft, z.lit, z.dist, z.copyLen, z.copyDist = 0, nil, nil, 0, 0
	z.hpos, z.total = 0, 0
	z.hold, z.rest, z.err = z.hold[:0], z.rest[:0], nil
	z.status, z.maxDist = NeedInput, 0
}

// Done reports whether the final block has been decoded.
func (z *Decoder) Done() bool { return z.st == stDone }

// Status says why the last call to Decode returned.
func (z *Decoder) Status() Status { return z.status }

// MaxDistance is the farthest back a match of this stream has reached:
// a test of an encoder's window (QAT's window_log) reads it.
func (z *Decoder) MaxDistance() int { return z.maxDist }

// TotalOut is the number of bytes decoded so far.
func (z *Decoder) TotalOut() int64 { return z.total }

// Rest returns bytes the decoder took in that lie after the end of the
// deflate stream (the start of a zlib or gzip trailer). Valid once Done.
func (z *Decoder) Rest() []byte { return z.rest }

// Decode decodes from src into dst. It returns how many bytes it wrote
// and how many of src it consumed. It consumes all of src unless dst
// fills up or the stream ends; input that does not complete a step is
// kept inside the decoder, as zlib keeps it in its bit buffer. Status
// then says why it returned. An error is a *CorruptError (wrapping
// ErrCorrupt) and is sticky.
func (z *Decoder) Decode(dst, src []byte) (nDst, nSrc int, err error) {
	nDst, nSrc, why := z.advance(dst, src)
	z.status = why.status()
	if why == stopError {
		return nDst, nSrc, z.err
	}
	return nDst, nSrc, nil
}

// advance is Decode's body: it says why it stopped rather than setting
// the status at each of its returns.
func (z *Decoder) advance(dst, src []byte) (nDst, nSrc int, why stop) {
	if z.err != nil {
		return 0, 0, stopError
	}
	if z.st == stDone {
		return 0, 0, stopDone
	}
	// Phase 1: held bytes from the last call, joined by new input a piece
	// at a time until the decoder has moved past them.
	for len(z.hold) > 0 {
		k := min(len(src)-nSrc, holdChunk)
		held := len(z.hold)
		buf := append(z.hold, src[nSrc:nSrc+k]...)
		pos, nd, why := z.run(buf, 0, dst, nDst)
		nDst = nd
		switch {
		case why == stopError:
			return nDst, nSrc, why
		case pos >= held:
			// Past the held bytes: go on in src itself.
			nSrc += pos - held
			z.hold = buf[:0] // keep the larger array append may have made
			if why == stopDone || why == stopDstFull {
				return nDst, nSrc, why
			}
			// stopNeedInput past the held bytes: continue in phase 2.
		default:
			// Still inside the held bytes.
			nSrc += k
			if why == stopDone {
				z.rest = append(z.rest, buf[pos:held]...)
				nSrc -= k
				return nDst, nSrc, why
			}
			// copy, not append: buf[pos:] overlaps buf[:0] and moves down.
			z.hold = buf[:copy(buf, buf[pos:])]
			if why == stopDstFull || k == 0 {
				return nDst, nSrc, why
			}
		}
	}
	// Phase 2: straight from src. It runs even with src used up and dst
	// full, to learn which of the two stops the decoder.
	pos, nd, why := z.run(src, nSrc, dst, nDst)
	nDst = nd
	if why == stopNeedInput {
		z.hold = append(z.hold[:0], src[pos:]...)
		return nDst, len(src), why
	}
	return nDst, pos, why
}

// fail records a corrupt-data error.
func (z *Decoder) fail(format string, args ...any) stop {
	z.err = &CorruptError{Reason: fmt.Sprintf(format, args...)}
	return stopError
}

// need makes n bits available in the bit buffer, reading whole bytes
// from in, and reports whether it could.
func (z *Decoder) need(n uint, in []byte, pos *int) bool {
	for z.nbits < n {
		if *pos >= len(in) {
			return false
		}
		z.bits |= uint64(in[*pos]) << z.nbits
		*pos++
		z.nbits += 8
	}
	return true
}

func (z *Decoder) drop(n uint) {
	z.bits >>= n
	z.nbits -= n
}

// emit writes one decoded byte.
func (z *Decoder) emit(dst []byte, nd int, b byte) {
	dst[nd] = b
	z.hist[z.hpos] = b
	z.hpos = (z.hpos + 1) & windowMask
	z.total++
}

type decodeStatus uint8

const (
	decOK decodeStatus = iota
	decNeedInput
	decBad
)

// decode reads one symbol of code h.
func (z *Decoder) decode(h *huffman, in []byte, pos *int) (int, decodeStatus) {
	z.need(maxBits, in, pos) // as many as there are; checked below
	if e := h.fast[z.bits&(1<<fastBits-1)]; e != 0 {
		l := uint(e & 15)
		if l > z.nbits {
			return 0, decNeedInput
		}
		z.drop(l)
		return int(e >> 4), decOK
	}
	code, first, index := 0, 0, 0
	for l := uint(1); l <= maxBits; l++ {
		if l > z.nbits {
			return 0, decNeedInput
		}
		code |= int(z.bits>>(l-1)) & 1
		count := int(h.count[l])
		if code-count < first {
			z.drop(l)
			return int(h.symbol[index+code-first]), decOK
		}
		index += count
		first += count
		first <<= 1
		code <<= 1
	}
	return 0, decBad
}

// run steps the state machine over in from pos, writing dst from nd.
func (z *Decoder) run(in []byte, pos int, dst []byte, nd int) (int, int, stop) {
	for {
		switch z.st {
		case stDone:
			return pos, nd, stopDone

		case stHeader:
			if z.final {
				// End of stream: drop the partial byte; whole bytes in
				// the bit buffer belong to what follows.
				z.drop(z.nbits % 8)
				for z.nbits >= 8 {
					z.rest = append(z.rest, byte(z.bits))
					z.drop(8)
				}
				z.st = stDone
				return pos, nd, stopDone
			}
			sPos, sBits, sN := pos, z.bits, z.nbits
			why := z.blockHeader(in, &pos)
			if why == stopNeedInput {
				pos, z.bits, z.nbits = sPos, sBits, sN
				return pos, nd, why
			}
			if why == stopError {
				return pos, nd, why
			}

		case stStored:
			for z.storedLeft > 0 {
				if nd == len(dst) {
					return pos, nd, stopDstFull
				}
				if z.nbits >= 8 {
					z.emit(dst, nd, byte(z.bits))
					nd++
					z.drop(8)
					z.storedLeft--
					continue
				}
				if pos >= len(in) {
					return pos, nd, stopNeedInput
				}
				n := min(z.storedLeft, len(dst)-nd, len(in)-pos)
				for _, b := range in[pos : pos+n] {
					z.emit(dst, nd, b)
					nd++
				}
				pos += n
				z.storedLeft -= n
			}
			z.st = stHeader

		case stCodes:
			for z.copyLen > 0 {
				if nd == len(dst) {
					return pos, nd, stopDstFull
				}
				n := min(z.copyLen, len(dst)-nd)
				from := z.hpos - z.copyDist
				for range n {
					b := z.hist[from&windowMask]
					from++
					z.emit(dst, nd, b)
					nd++
				}
				z.copyLen -= n
			}
			sPos, sBits, sN := pos, z.bits, z.nbits
			sym, st := z.decode(z.lit, in, &pos)
			switch st {
			case decNeedInput:
				pos, z.bits, z.nbits = sPos, sBits, sN
				return pos, nd, stopNeedInput
			case decBad:
				return pos, nd, z.fail("invalid literal/length code")
			}
			switch {
			case sym < 256:
				if nd == len(dst) {
					pos, z.bits, z.nbits = sPos, sBits, sN
					return pos, nd, stopDstFull
				}
				z.emit(dst, nd, byte(sym))
				nd++
				continue
			case sym == 256:
				z.st = stHeader
				continue
			case sym > 285:
				return pos, nd, z.fail("invalid literal/length symbol %d", sym)
			}
			sym -= 257
			eb := lengthExtra(sym)
			if !z.need(eb, in, &pos) {
				pos, z.bits, z.nbits = sPos, sBits, sN
				return pos, nd, stopNeedInput
			}
			length := lengthBase(sym) + int(z.bits&(1<<eb-1))
			z.drop(eb)
			dsym, st := z.decode(z.dist, in, &pos)
			switch st {
			case decNeedInput:
				pos, z.bits, z.nbits = sPos, sBits, sN
				return pos, nd, stopNeedInput
			case decBad:
				return pos, nd, z.fail("invalid distance code")
			}
			if dsym > 29 {
				return pos, nd, z.fail("invalid distance symbol %d", dsym)
			}
			eb = distExtra(dsym)
			if !z.need(eb, in, &pos) {
				pos, z.bits, z.nbits = sPos, sBits, sN
				return pos, nd, stopNeedInput
			}
			dist := distBase(dsym) + int(z.bits&(1<<eb-1))
			z.drop(eb)
			if int64(dist) > z.total {
				return pos, nd, z.fail("distance %d too far back (%d bytes decoded)", dist, z.total)
			}
			z.copyLen, z.copyDist = length, dist
			z.maxDist = max(z.maxDist, dist)
		}
	}
}

// blockHeader reads a block header, and for a dynamic block its code
// tables, as one step. BFINAL is recorded only when the step completes:
// a step that rolls back for want of input must leave no trace, or the
// next call would take the final block's header as already read and end
// the stream before its last block.
func (z *Decoder) blockHeader(in []byte, pos *int) stop {
	if !z.need(3, in, pos) {
		return stopNeedInput
	}
	final := z.bits&1 == 1
	typ := (z.bits >> 1) & 3
	z.drop(3)
	switch typ {
	case 0:
		z.drop(z.nbits % 8)
		if !z.need(32, in, pos) {
			return stopNeedInput
		}
		n, nn := z.bits&0xffff, (z.bits>>16)&0xffff
		z.drop(32)
		if n != ^nn&0xffff {
			return z.fail("stored block length %d does not match its complement %d", n, nn)
		}
		z.storedLeft = int(n)
		z.st = stStored
	case 1:
		z.buildFixed()
		z.lit, z.dist = &z.fixedLit, &z.fixedDist
		z.st = stCodes
	case 2:
		if why := z.dynamic(in, pos); why != stopDone {
			return why
		}
		z.lit, z.dist = &z.dynLit, &z.dynDist
		z.st = stCodes
	default:
		return z.fail("invalid block type 3")
	}
	z.final = final
	return stopDone
}

// buildFixed makes the fixed codes of RFC 1951 3.2.6 once per decoder.
func (z *Decoder) buildFixed() {
	if z.fixedBuilt {
		return
	}
	l := FixedLitLengths()
	z.fixedLit.build(l[:])
	var d [30]uint8
	for i := range d {
		d[i] = 5
	}
	z.fixedDist.build(d[:])
	z.fixedBuilt = true
}

// dynamic reads a dynamic block's code tables (RFC 1951 3.2.7).
func (z *Decoder) dynamic(in []byte, pos *int) stop {
	if !z.need(14, in, pos) {
		return stopNeedInput
	}
	nlen := int(z.bits&31) + 257
	ndist := int(z.bits>>5&31) + 1
	ncode := int(z.bits>>10&15) + 4
	z.drop(14)
	if nlen > 286 || ndist > 30 {
		return z.fail("bad code counts (%d literal/length, %d distance)", nlen, ndist)
	}
	l := z.lengths[:]
	for i := range 19 {
		l[i] = 0
	}
	for i := range ncode {
		if !z.need(3, in, pos) {
			return stopNeedInput
		}
		l[codeLengthOrder(i)] = uint8(z.bits & 7)
		z.drop(3)
	}
	if z.clen.build(l[:19]) != 0 {
		return z.fail("incomplete or over-subscribed code-length code")
	}
	for i := 0; i < nlen+ndist; {
		sym, st := z.decode(&z.clen, in, pos)
		switch st {
		case decNeedInput:
			return stopNeedInput
		case decBad:
			return z.fail("invalid code-length code")
		}
		if sym < 16 {
			l[i] = uint8(sym)
			i++
			continue
		}
		var rep int
		var val uint8
		switch sym {
		case 16:
			if i == 0 {
				return z.fail("repeat with no previous length")
			}
			if !z.need(2, in, pos) {
				return stopNeedInput
			}
			val, rep = l[i-1], 3+int(z.bits&3)
			z.drop(2)
		case 17:
			if !z.need(3, in, pos) {
				return stopNeedInput
			}
			rep = 3 + int(z.bits&7)
			z.drop(3)
		default:
			if !z.need(7, in, pos) {
				return stopNeedInput
			}
			rep = 11 + int(z.bits&127)
			z.drop(7)
		}
		if i+rep > nlen+ndist {
			return z.fail("code lengths repeat past the end")
		}
		for range rep {
			l[i] = val
			i++
		}
	}
	if l[256] == 0 {
		return z.fail("no end-of-block code")
	}
	if r := z.dynLit.build(l[:nlen]); r < 0 || (r > 0 && nlen != int(z.dynLit.count[0]+z.dynLit.count[1])) {
		return z.fail("incomplete or over-subscribed literal/length code")
	}
	if r := z.dynDist.build(l[nlen : nlen+ndist]); r < 0 || (r > 0 && ndist != int(z.dynDist.count[0]+z.dynDist.count[1])) {
		return z.fail("incomplete or over-subscribed distance code")
	}
	return stopDone
}
