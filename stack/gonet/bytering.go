package gonet

import "sync/atomic"

// byteRing is a bounded single-producer single-consumer byte ring. The
// producer publishes with a release store of tail, the consumer with one
// of head; neither side ever locks.
//
// Its storage is allocated lazily and grows (powers of two, up to max)
// only while the ring is empty, so that ten thousand mostly idle
// connections do not each hold their full ring: a connection that only
// ever carries 64-byte messages keeps a minRing buffer. Only the producer
// replaces the storage, and only when it sees the ring empty; the new
// storage is published (atomic store) before the bytes written into it
// and the tail that covers them, and the consumer loads the storage after
// the tail, so it always reads bytes from the storage they were written
// to. A consumer cannot still be reading the old storage then: the ring
// is empty only after it consumed (and so finished copying) everything.
type byteRing struct {
	head atomic.Uint64
	_    [56]byte
	tail atomic.Uint64
	_    [56]byte
	buf  atomic.Pointer[ringStore]
	max  int
}

// ringStore is one generation of a ring's storage.
type ringStore struct {
	mask uint64
	b    []byte
}

// minRing is the smallest storage a ring gets: one cache line. The
// first write sizes the storage to fit it (a power of two), so a
// connection that only ever carries 64-byte messages holds 64 bytes per
// direction here, and one that streams grows to max at its first pause.
const minRing = 64

func newByteRing(max int) *byteRing {
	return &byteRing{max: max}
}

// store returns the current storage; nil before the first write.
func (r *byteRing) store() *ringStore { return r.buf.Load() }

// length returns the bytes in the ring.
func (r *byteRing) length() int { return int(r.tail.Load() - r.head.Load()) }

// space returns the free bytes of the current storage, or max before the
// first write (the storage is made on demand).
func (r *byteRing) space() int {
	if s := r.store(); s != nil {
		return len(s.b) - r.length()
	}
	return r.max
}

// reserve makes the storage at least want bytes (at most max) when the
// ring is empty, so that a larger write fits at once (producer only).
func (r *byteRing) reserve(want int) {
	s := r.store()
	if s != nil && (len(s.b) >= want || len(s.b) >= r.max) {
		return
	}
	if s != nil && r.tail.Load() != r.head.Load() {
		return // not empty: the consumer may be reading s
	}
	n := minRing
	for n < want && n < r.max {
		n <<= 1
	}
	n = min(n, r.max)
	if s != nil && n <= len(s.b) {
		return
	}
	r.buf.Store(&ringStore{mask: uint64(n - 1), b: make([]byte, n)})
}

// writable returns the first contiguous free region (producer side).
func (r *byteRing) writable() []byte {
	s := r.store()
	if s == nil {
		r.reserve(minRing)
		s = r.store()
	}
	t := r.tail.Load()
	free := uint64(len(s.b)) - (t - r.head.Load())
	off := t & s.mask
	n := min(free, uint64(len(s.b))-off)
	return s.b[off : off+n]
}

// commit publishes n bytes written into writable's region.
func (r *byteRing) commit(n int) { r.tail.Add(uint64(n)) }

// write copies as much of p as fits and returns the count (producer).
func (r *byteRing) write(p []byte) int {
	r.reserve(len(p))
	total := 0
	for len(p) > 0 {
		w := r.writable()
		if len(w) == 0 {
			break
		}
		n := copy(w, p)
		r.commit(n)
		p = p[n:]
		total += n
	}
	return total
}

// readable returns the first contiguous filled region (consumer side).
// The tail is loaded before the storage (see byteRing).
func (r *byteRing) readable() []byte {
	h := r.head.Load()
	used := r.tail.Load() - h
	if used == 0 {
		return nil
	}
	s := r.store()
	off := h & s.mask
	n := min(used, uint64(len(s.b))-off)
	return s.b[off : off+n]
}

// consume releases n bytes returned by readable.
func (r *byteRing) consume(n int) { r.head.Add(uint64(n)) }

// read copies up to len(p) bytes out and returns the count (consumer).
func (r *byteRing) read(p []byte) int {
	total := 0
	for len(p) > 0 {
		b := r.readable()
		if len(b) == 0 {
			break
		}
		n := copy(p, b)
		r.consume(n)
		p = p[n:]
		total += n
	}
	return total
}
