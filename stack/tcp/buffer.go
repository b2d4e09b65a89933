package tcp

// ring is a byte ring buffer that grows on demand up to limit, so that
// thousands of idle connections do not each hold megabytes. Bytes [0, n)
// from head are the stored stream; on the receive side bytes beyond n (up
// to the capacity) may hold out-of-order data written with writeAt.
//
// Its offsets are 32-bit (Config.Validate keeps both buffers within
// 1 GiB), so that a connection's two rings cost 96 bytes, not 128.
type ring struct {
	buf   []byte
	head  int32
	n     int32
	limit int32
	// soft, when above 0, bounds the growth of the capacity (not below
	// what a write needs): a receive buffer under memory pressure grows
	// to what its window obliges it to hold, not to twice its size.
	soft int32
	// acct is charged every change of the capacity (the stack's memory
	// budget); nil for a ring outside a stack.
	acct *memAcct
}

// ringInitial is the first allocation of a buffer: small, since a
// connection carrying short messages never needs more, and ten thousand
// of them each holding 16 KiB per direction cost hundreds of MiB.
const ringInitial = 256

func newRing(limit int, acct *memAcct) ring { return ring{limit: int32(limit), acct: acct} }

// setCap replaces the buffer's memory (nil: none), charging the change.
func (r *ring) setCap(b []byte) {
	if r.acct != nil {
		r.acct.add(len(b) - len(r.buf))
	}
	r.buf = b
}

func (r *ring) length() int { return int(r.n) }
func (r *ring) free() int   { return int(r.limit - r.n) }

// grow makes the capacity at least need (need <= limit), keeping every
// byte of the old capacity (stream and out-of-order data) at the same
// offsets from head.
func (r *ring) grow(need int) {
	if need <= len(r.buf) {
		return
	}
	nb := make([]byte, r.growTarget(need))
	if len(r.buf) > 0 {
		k := copy(nb, r.buf[r.head:])
		copy(nb[k:], r.buf[:r.head])
	}
	r.setCap(nb)
	r.head = 0
}

// growTarget is the capacity grow(need) gives a buffer smaller than
// need: twice the old one (at least ringInitial, at least need, at most
// limit), or no more than soft (nor less than need) when soft is set.
func (r *ring) growTarget(need int) int {
	c := len(r.buf) * 2
	if c < ringInitial {
		c = ringInitial
	}
	if soft := int(r.soft); soft > 0 && c > soft {
		c = soft
	}
	if c < need {
		c = need
	}
	if c > int(r.limit) {
		c = int(r.limit)
	}
	return c
}

// write appends up to free() bytes of p to the stream.
func (r *ring) write(p []byte) int {
	if len(p) > r.free() {
		p = p[:r.free()]
	}
	if len(p) == 0 {
		return 0
	}
	r.writeAt(int(r.n), p)
	r.n += int32(len(p))
	return len(p)
}

// writeAt stores p at offset off from head without changing the stream
// length (off+len(p) <= limit).
func (r *ring) writeAt(off int, p []byte) {
	r.grow(off + len(p))
	c := len(r.buf)
	i := (int(r.head) + off) % c
	k := copy(r.buf[i:], p)
	copy(r.buf, p[k:])
}

// extend adds k bytes already written with writeAt to the stream.
func (r *ring) extend(k int) { r.n += int32(k) }

// peek copies bytes from stream offset off into p and returns the count.
func (r *ring) peek(off int, p []byte) int {
	n := int(r.n)
	if off >= n {
		return 0
	}
	if len(p) > n-off {
		p = p[:n-off]
	}
	c := len(r.buf)
	i := (int(r.head) + off) % c
	k := copy(p, r.buf[i:])
	if k < len(p) {
		copy(p[k:], r.buf)
	}
	return len(p)
}

// discard drops k bytes from the front of the stream.
func (r *ring) discard(k int) {
	if k > int(r.n) {
		k = int(r.n)
	}
	r.n -= int32(k)
	// head keeps moving even when the stream empties: out-of-order data
	// may sit beyond it at fixed offsets.
	if len(r.buf) > 0 {
		r.head = int32((int(r.head) + k) % len(r.buf))
	}
}

// rewind moves an empty buffer's head back to the start of its memory,
// so that the next bytes land where the last ones were, still in the CPU's
// cache, instead of marching through a capacity of megabytes. Only for a
// buffer with no out-of-order data stored beyond its stream.
func (r *ring) rewind() {
	if r.n == 0 {
		r.head = 0
	}
}

// read copies and discards up to len(p) bytes.
func (r *ring) read(p []byte) int {
	k := r.peek(0, p)
	r.discard(k)
	return k
}

// release frees the memory of a buffer (on close, TIME-WAIT), keeping
// it in sp for another connection when it is of the first size.
func (r *ring) release(sp *spareRings) {
	if len(r.buf) == ringInitial {
		sp.put(r.buf)
	}
	r.setCap(nil)
	r.head, r.n = 0, 0
}

// recycle hands an empty buffer of the first size back to sp, so that an
// idle connection holds no buffer memory (as a Linux socket holds no
// skbs when its queues are empty). Only for a buffer with no
// out-of-order data beyond its stream. A buffer that grew is kept: a
// connection that once needed more is likely to again.
func (r *ring) recycle(sp *spareRings) {
	if r.n == 0 && len(r.buf) == ringInitial {
		sp.put(r.buf)
		r.setCap(nil)
		r.head = 0
	}
}

// prime gives a buffer without memory one of sp's spare first-size
// buffers when need fits in it, before bytes are written.
func (r *ring) prime(sp *spareRings, need int) {
	if r.buf == nil && need <= ringInitial {
		r.setCap(sp.get())
		r.head = 0
	}
}

// maxSpareRings bounds a stack's spare buffers (1 MiB of them): enough
// for the buffers a burst across thousands of connections holds at once,
// while an idle stack returns the rest to the garbage collector.
const maxSpareRings = 4096

// spareRings is a stack's free list of first-size (ringInitial) buffers,
// taken by connections when bytes arrive or are written and returned when
// their buffers empty. Only the stack's lcore touches it, so it needs no
// lock; its LIFO order reuses the buffer freed last, still in cache.
type spareRings struct {
	bufs [][]byte
}

// get returns a spare buffer, or a new one when none is left.
func (sp *spareRings) get() []byte {
	if n := len(sp.bufs); n > 0 {
		b := sp.bufs[n-1]
		sp.bufs[n-1] = nil
		sp.bufs = sp.bufs[:n-1]
		return b
	}
	return make([]byte, ringInitial)
}

// put keeps b for reuse, or leaves it to the garbage collector when the
// list is full.
func (sp *spareRings) put(b []byte) {
	if len(sp.bufs) < maxSpareRings {
		sp.bufs = append(sp.bufs, b)
	}
}

// seqRange is a range [start, end) of sequence space.
type seqRange struct {
	start, end Seq
	stamp      uint64 // recency, for choosing SACK blocks (RFC 2018 section 4)
}

// assembler tracks the out-of-order ranges received beyond RCV.NXT, in
// ascending order and never touching. The data itself sits in the
// receive ring at its offset, so memory is bounded by the window; the
// number of ranges is bounded by the stack's MaxOOORanges (RFC 9293
// section 3.10.7.4 lets a receiver keep or drop out-of-order segments).
// It is only its slice: the list is allocated when the first hole opens
// and freed when the last one fills, so that a connection without
// reordering or loss, nearly all of a million idle ones, holds none, and
// the bound and the recency stamps come from the stack.
type assembler struct {
	r []seqRange
}

// add records [start, end), merging neighbours, stamped with stamp (the
// stack's counter: only the order of a connection's stamps matters). It
// returns false, leaving the ranges unchanged, when that would need more
// than max ranges.
func (a *assembler) add(start, end Seq, max int, stamp uint64) bool {
	// Find the first range whose end >= start.
	i := 0
	for i < len(a.r) && a.r[i].end.LessThan(start) {
		i++
	}
	j := i
	for j < len(a.r) && a.r[j].start.LessEq(end) {
		j++
	}
	if i == j {
		if len(a.r) >= max {
			return false
		}
		if a.r == nil {
			a.r = make([]seqRange, 0, min(max, firstRanges))
		}
		a.r = append(a.r, seqRange{})
		copy(a.r[i+1:], a.r[i:])
		a.r[i] = seqRange{start, end, stamp}
		return true
	}
	ns := seqMin(start, a.r[i].start)
	ne := seqMax(end, a.r[j-1].end)
	a.r[i] = seqRange{ns, ne, stamp}
	a.r = append(a.r[:i+1], a.r[j:]...)
	return true
}

// popContiguous removes the range that starts at or before nxt (if any)
// and returns its end, the new RCV.NXT.
func (a *assembler) popContiguous(nxt Seq) (Seq, bool) {
	if len(a.r) == 0 || a.r[0].start.GreaterThan(nxt) {
		return nxt, false
	}
	end := seqMax(a.r[0].end, nxt)
	a.r = append(a.r[:0], a.r[1:]...)
	if len(a.r) == 0 {
		a.r = nil // the last hole filled: the list goes
	}
	return end, true
}

func (a *assembler) empty() bool { return len(a.r) == 0 }

// reset forgets every range and frees the list.
func (a *assembler) reset() { a.r = nil }

// firstRanges is the capacity a range list (out-of-order ranges, SACK
// scoreboard) is first given: one loss episode rarely opens more holes,
// and a list that needs more grows by append up to its bound.
const firstRanges = 4

// sackBlocks fills dst with up to len(dst) ranges, most recently changed
// first (RFC 2018 section 4), and returns the count.
func (a *assembler) sackBlocks(dst []SACKBlock) int {
	n := 0
	var last uint64 = ^uint64(0)
	for n < len(dst) {
		best := -1
		for i := range a.r {
			if a.r[i].stamp < last && (best < 0 || a.r[i].stamp > a.r[best].stamp) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		dst[n] = SACKBlock{a.r[best].start, a.r[best].end}
		last = a.r[best].stamp
		n++
	}
	return n
}
