package gonet

import "sync/atomic"

// byteRing is a bounded single-producer single-consumer byte ring. The
// producer publishes with a release store of tail, the consumer with one
// of head; neither side ever locks. Its size is a power of two.
type byteRing struct {
	head atomic.Uint64
	_    [56]byte
	tail atomic.Uint64
	_    [56]byte
	mask uint64
	buf  []byte
}

func newByteRing(size int) *byteRing {
	return &byteRing{mask: uint64(size - 1), buf: make([]byte, size)}
}

// length returns the bytes in the ring.
func (r *byteRing) length() int { return int(r.tail.Load() - r.head.Load()) }

// space returns the free bytes.
func (r *byteRing) space() int { return len(r.buf) - r.length() }

// writable returns the first contiguous free region (producer side).
func (r *byteRing) writable() []byte {
	t := r.tail.Load()
	free := uint64(len(r.buf)) - (t - r.head.Load())
	off := t & r.mask
	n := min(free, uint64(len(r.buf))-off)
	return r.buf[off : off+n]
}

// commit publishes n bytes written into writable's region.
func (r *byteRing) commit(n int) { r.tail.Add(uint64(n)) }

// write copies as much of p as fits and returns the count (producer).
func (r *byteRing) write(p []byte) int {
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
func (r *byteRing) readable() []byte {
	h := r.head.Load()
	used := r.tail.Load() - h
	off := h & r.mask
	n := min(used, uint64(len(r.buf))-off)
	return r.buf[off : off+n]
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
