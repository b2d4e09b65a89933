package qat

import (
	"errors"
	"fmt"
)

// The inflater is a resumable RFC 1951 decoder: it can stop at any input
// byte and any output byte and continue with the next operation's bytes,
// as QAT's stateful decompression does. It decodes in units (a block
// header with its code tables, one literal, one length/distance pair, a
// run of stored bytes) and checkpoints its bit reader before each, so
// when input runs out mid-unit it rolls back and keeps the unit's bytes
// for the next call. It never panics on malformed input; every error
// names what was wrong.

// Inflater states.
const (
	stHeader = iota // a block header comes next
	stStored        // inside a stored block
	stCodes         // inside a Huffman-coded block
	stDone          // the final block has ended
)

const (
	fastBits   = 9
	windowSize = 1 << 15
	windowMask = windowSize - 1
)

// Errors of malformed streams.
var (
	errBlockType      = errors.New("invalid block type 3")
	errStoredLen      = errors.New("stored block length does not match its complement")
	errTooManyCodes   = errors.New("too many length or distance codes")
	errCodeLengths    = errors.New("invalid code-length code")
	errRepeatFirst    = errors.New("repeat of a previous length with none before it")
	errRepeatOverflow = errors.New("code-length repeat runs past the end")
	errNoEOB          = errors.New("no end-of-block code")
	errLitCode        = errors.New("invalid literal/length code")
	errDistCode       = errors.New("invalid distance code")
	errInvalidSymbol  = errors.New("invalid Huffman code")
)

// huffman is a canonical Huffman decoding table: counts of codes per
// length and symbols in canonical order (as zlib's puff.c), plus a table
// of the codes no longer than fastBits indexed by the next input bits.
type huffman struct {
	count  [16]uint16
	symbol [288]uint16
	fast   [1 << fastBits]uint16 // symbol<<4 | length; 0: use the slow path
}

// build makes the table of lengths. As Go's compress/flate does, it
// refuses an over-subscribed set and an incomplete one, except a set of
// no codes or of one code of length 1.
func (h *huffman) build(lengths []uint8, what string) error {
	h.count = [16]uint16{}
	for _, l := range lengths {
		h.count[l]++
	}
	h.count[0] = 0
	codes, maxLen := 0, 0
	left := 1
	for l := 1; l < 16; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return fmt.Errorf("over-subscribed %s code", what)
		}
		if h.count[l] > 0 {
			maxLen = l
			codes += int(h.count[l])
		}
	}
	if left > 0 && codes != 0 && !(codes == 1 && maxLen == 1) {
		return fmt.Errorf("incomplete %s code", what)
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for s, l := range lengths {
		if l != 0 {
			h.symbol[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	h.fast = [1 << fastBits]uint16{}
	var rev [288]uint16
	canonicalCodes(lengths, rev[:len(lengths)])
	for s, l := range lengths {
		if l == 0 || l > fastBits {
			continue
		}
		for j := uint16(0); j < 1<<(fastBits-l); j++ {
			h.fast[rev[s]|j<<l] = uint16(s)<<4 | uint16(l)
		}
	}
	return nil
}

// inflater is the state of one decompression stream.
type inflater struct {
	t deflateTables

	// Input: what was left of earlier calls followed by this call's
	// source, and the bit reader over it.
	in    []byte
	left  []byte
	buf   []byte
	pos   int
	bits  uint64
	nbits uint

	state      int
	final      bool
	storedLeft int
	lit, dist  *huffman
	dyn        [3]huffman // dynamic literal/length, distance, code-length
	fixed      *[2]huffman
	copyLen    int
	copyDist   int

	win   [windowSize]byte
	wpos  int
	whave int
	out   []byte
	nout  int

	// maxDist is the farthest distance decoded, for tests of windows.
	maxDist int
}

func newInflater() *inflater { return &inflater{t: newDeflateTables()} }

// reset starts a new stream. A nil inflater is left alone.
func (f *inflater) reset() {
	if f == nil {
		return
	}
	f.left = f.left[:0]
	f.in, f.pos, f.bits, f.nbits = nil, 0, 0, 0
	f.state, f.final, f.storedLeft = stHeader, false, 0
	f.lit, f.dist = nil, nil
	f.copyLen, f.copyDist = 0, 0
	f.wpos, f.whave = 0, 0
}

// inflateResult is what one call did.
type inflateResult struct {
	consumed, produced int
	done               bool // the final block ended
	outFull            bool // stopped because dst is full
	err                error
}

// checkpoint is the bit reader's position before a unit.
type checkpoint struct {
	pos   int
	bits  uint64
	nbits uint
}

func (f *inflater) save() checkpoint     { return checkpoint{f.pos, f.bits, f.nbits} }
func (f *inflater) restore(c checkpoint) { f.pos, f.bits, f.nbits = c.pos, c.bits, c.nbits }
func (f *inflater) fill()                { f.fillTo(57) }
func (f *inflater) need(n uint) bool     { f.fillTo(n); return f.nbits >= n }
func (f *inflater) take(n uint) uint32 {
	v := uint32(f.bits & (1<<n - 1))
	f.bits >>= n
	f.nbits -= n
	return v
}
func (f *inflater) emitRoom() bool { return f.nout < len(f.out) }
func (f *inflater) fillTo(n uint) {
	for f.nbits < n && f.pos < len(f.in) {
		f.bits |= uint64(f.in[f.pos]) << f.nbits
		f.pos++
		f.nbits += 8
	}
}

func (f *inflater) emit(b byte) {
	f.out[f.nout] = b
	f.nout++
	f.win[f.wpos] = b
	f.wpos = (f.wpos + 1) & windowMask
	if f.whave < windowSize {
		f.whave++
	}
}

// inflate decodes src into dst, continuing the stream.
func (f *inflater) inflate(src, dst []byte) inflateResult {
	prevLeft := len(f.left)
	if prevLeft > 0 {
		f.buf = append(append(f.buf[:0], f.left...), src...)
		f.in = f.buf
	} else {
		f.in = src
	}
	f.pos, f.out, f.nout = 0, dst, 0
	var err error
	outFull, needIn := false, false
loop:
	for err == nil {
		switch f.state {
		case stDone:
			break loop
		case stHeader:
			cp := f.save()
			var ok bool
			if ok, err = f.header(); !ok && err == nil {
				f.restore(cp)
				needIn = true
				break loop
			}
		case stStored:
			if f.storedLeft == 0 {
				f.endBlock()
				continue
			}
			if !f.emitRoom() {
				outFull = true
				break loop
			}
			if f.nbits >= 8 { // bytes the bit reader pulled ahead
				f.emit(byte(f.take(8)))
				f.storedLeft--
				continue
			}
			n := min(f.storedLeft, len(f.in)-f.pos, len(f.out)-f.nout)
			if n == 0 {
				needIn = true
				break loop
			}
			for _, b := range f.in[f.pos : f.pos+n] {
				f.emit(b)
			}
			f.pos += n
			f.storedLeft -= n
		case stCodes:
			if f.copyLen > 0 {
				for f.copyLen > 0 && f.emitRoom() {
					f.emit(f.win[(f.wpos-f.copyDist)&windowMask])
					f.copyLen--
				}
				if f.copyLen > 0 {
					outFull = true
					break loop
				}
			}
			cp := f.save()
			var ok bool
			if ok, outFull, err = f.symbol(); err == nil && (!ok || outFull) {
				f.restore(cp)
				needIn = !ok
				break loop
			}
		}
	}
	res := inflateResult{produced: f.nout, outFull: outFull, err: err}
	unread := len(f.in) - f.pos
	switch {
	case err != nil:
		res.consumed = min(len(src), max(0, f.pos-prevLeft))
		f.left = f.left[:0]
	case f.state == stDone:
		// Whole bytes the bit reader holds are past the end: give them
		// back; what is left of the last byte is padding.
		unread += int(f.nbits / 8)
		f.bits, f.nbits = 0, 0
		res.done = true
		res.consumed = max(0, len(src)-unread)
		f.left = f.left[:0]
	case needIn:
		// Keep the unfinished unit's bytes: the device holds them.
		f.left = append(f.left[:0], f.in[f.pos:]...)
		res.consumed = len(src)
	default: // output full: give back what was not read
		if unread <= len(src) {
			res.consumed = len(src) - unread
			f.left = f.left[:0]
		} else {
			f.left = append(f.left[:0], f.in[f.pos:prevLeft]...)
		}
	}
	f.in = nil
	return res
}

func (f *inflater) endBlock() {
	if f.final {
		f.state = stDone
	} else {
		f.state = stHeader
	}
}

// header reads a block header, with the code tables of a dynamic block.
// ok is false when input ran out.
func (f *inflater) header() (ok bool, err error) {
	if !f.need(3) {
		return false, nil
	}
	f.final = f.take(1) == 1
	switch f.take(2) {
	case 0:
		f.take(f.nbits % 8)
		if !f.need(32) {
			return false, nil
		}
		n, nn := f.take(16), f.take(16)
		if n != ^nn&0xffff {
			return false, errStoredLen
		}
		f.storedLeft = int(n)
		f.state = stStored
	case 1:
		if f.fixed == nil {
			f.fixed = new([2]huffman)
			lit := fixedLitLengths()
			var dist [32]uint8
			for i := range dist {
				dist[i] = 5
			}
			if err := f.fixed[0].build(lit[:], "fixed literal"); err != nil {
				return false, err
			}
			if err := f.fixed[1].build(dist[:], "fixed distance"); err != nil {
				return false, err
			}
		}
		f.lit, f.dist = &f.fixed[0], &f.fixed[1]
		f.state = stCodes
	case 2:
		if ok, err := f.dynamic(); !ok || err != nil {
			return ok, err
		}
		f.lit, f.dist = &f.dyn[0], &f.dyn[1]
		f.state = stCodes
	default:
		return false, errBlockType
	}
	return true, nil
}

// dynamic reads a dynamic block's code tables (RFC 1951 section 3.2.7).
func (f *inflater) dynamic() (bool, error) {
	if !f.need(14) {
		return false, nil
	}
	nlen := int(f.take(5)) + 257
	ndist := int(f.take(5)) + 1
	ncode := int(f.take(4)) + 4
	if nlen > 286 || ndist > 30 {
		return false, errTooManyCodes
	}
	var lengths [320]uint8
	for i := 0; i < ncode; i++ {
		if !f.need(3) {
			return false, nil
		}
		lengths[codeLengthOrder(i)] = uint8(f.take(3))
	}
	clen := &f.dyn[2]
	if err := clen.build(lengths[:19], "code-length"); err != nil {
		return false, fmt.Errorf("%w: %w", errCodeLengths, err)
	}
	lengths = [320]uint8{}
	for i := 0; i < nlen+ndist; {
		sym, ok, err := f.decode(clen)
		if !ok || err != nil {
			return ok, err
		}
		if sym < 16 {
			lengths[i] = uint8(sym)
			i++
			continue
		}
		var l uint8
		var rep int
		switch sym {
		case 16:
			if i == 0 {
				return false, errRepeatFirst
			}
			if !f.need(2) {
				return false, nil
			}
			l, rep = lengths[i-1], 3+int(f.take(2))
		case 17:
			if !f.need(3) {
				return false, nil
			}
			rep = 3 + int(f.take(3))
		default:
			if !f.need(7) {
				return false, nil
			}
			rep = 11 + int(f.take(7))
		}
		if i+rep > nlen+ndist {
			return false, errRepeatOverflow
		}
		for ; rep > 0; rep-- {
			lengths[i] = l
			i++
		}
	}
	if lengths[256] == 0 {
		return false, errNoEOB
	}
	if err := f.dyn[0].build(lengths[:nlen], "literal/length"); err != nil {
		return false, err
	}
	if err := f.dyn[1].build(lengths[nlen:nlen+ndist], "distance"); err != nil {
		return false, err
	}
	return true, nil
}

// decode reads one symbol of h. ok is false when input ran out.
func (f *inflater) decode(h *huffman) (int, bool, error) {
	if f.nbits < fastBits {
		f.fill()
	}
	if f.nbits >= fastBits {
		if e := h.fast[f.bits&(1<<fastBits-1)]; e != 0 {
			f.take(uint(e & 15))
			return int(e >> 4), true, nil
		}
	}
	code, first, index := 0, 0, 0
	for l := 1; l < 16; l++ {
		if !f.need(1) {
			return 0, false, nil
		}
		code |= int(f.take(1))
		count := int(h.count[l])
		if code-count < first {
			return int(h.symbol[index+code-first]), true, nil
		}
		index += count
		first = (first + count) << 1
		code <<= 1
	}
	return 0, true, errInvalidSymbol
}

// symbol decodes one literal, end of block, or length/distance pair.
// ok is false when input ran out; full when a literal has no room.
func (f *inflater) symbol() (ok, full bool, err error) {
	sym, ok, err := f.decode(f.lit)
	if !ok || err != nil {
		return ok, false, err
	}
	switch {
	case sym < 256:
		if !f.emitRoom() {
			return true, true, nil
		}
		f.emit(byte(sym))
		return true, false, nil
	case sym == 256:
		f.endBlock()
		return true, false, nil
	case sym > 285:
		return true, false, errLitCode
	}
	c := sym - 257
	if !f.need(uint(f.t.lext[c])) {
		return false, false, nil
	}
	length := int(f.t.lbase[c]) + int(f.take(uint(f.t.lext[c])))
	dsym, ok, err := f.decode(f.dist)
	if !ok || err != nil {
		return ok, false, err
	}
	if dsym >= 30 {
		return true, false, errDistCode
	}
	if !f.need(uint(f.t.dext[dsym])) {
		return false, false, nil
	}
	dist := int(f.t.dbase[dsym]) + int(f.take(uint(f.t.dext[dsym])))
	if dist > f.whave {
		return true, false, fmt.Errorf("invalid distance %d too far back (%d bytes of history)", dist, f.whave)
	}
	f.copyLen, f.copyDist = length, dist
	f.maxDist = max(f.maxDist, dist)
	return true, false, nil
}
