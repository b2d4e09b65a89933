package sockring

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Ring is a bounded single-producer single-consumer byte ring. The
// producer writes past the published tail (Written), and a hand-off
// publishes it (Publish, a release store); the consumer reads up to the
// published tail and releases with a store of head. Neither side locks.
//
// Its storage is allocated lazily and grows (powers of two, up to max)
// only while the ring is empty, so that ten thousand mostly idle
// connections do not each hold their full ring: a connection that only
// ever carries 64-byte messages keeps a MinStorage buffer. Only the
// producer replaces the storage, and only when everything it wrote has
// been consumed; the new storage is published (atomic store) before the
// bytes written into it and the tail that covers them, and the consumer
// loads the storage after the tail, so it always reads bytes from the
// storage they were written to.
//
// With a Storage (Config.Storage) the stack thread also gives the
// storage back when it finds the ring drained and unwritten since its
// last look (Pipe.ReleaseIdle: stack/rt's idle sweep, every 100 ms), so
// that an idle ring holds none, while a busy one keeps it between
// messages at no cost per message. Releasing as the producer (the receive ring) needs no lock:
// with every written byte consumed the consumer no longer reads the
// storage, and it loads the storage only after a tail that covers new
// bytes. Releasing as the consumer (the send ring) takes a per-ring owner
// word that the producer holds while it writes (a CAS in, a store out);
// if the producer is writing, the next sweep tries again.
type Ring struct {
	// head is the consumer's; one pad keeps it off the line of the
	// producer's fields (tail, written, the storage), the only ones
	// written often.
	head atomic.Uint64
	_    [56]byte
	tail atomic.Uint64
	// written is the producer's tail, published by the hand-off; it is
	// atomic so that the consumer can tell bytes are on their way.
	written atomic.Uint64
	buf     atomic.Pointer[store]
	// own is 0 when the storage is free, ownProducer while the producer
	// writes, ownConsumer while the consumer releases it (Storage only).
	own atomic.Uint32
	// guarded is set on a ring whose consumer releases its storage
	// (the send ring): its producer takes own while it writes.
	guarded bool
	// max is the most bytes the ring holds; last the size of the
	// storage it last gave back (with a Storage), which the next
	// storage it takes is at least, so that a ring that grew for a
	// stream keeps its size, though not its memory, while idle.
	max, last int32
	hand      Handoff
	// catchUp is hand as a CatchUpper, or nil: asserted once when the
	// hand-off is set, since Sync runs on every poll of every socket
	// with a call in flight.
	catchUp CatchUpper
	storage *Storage
}

// setHandoff makes h the ring's hand-off.
func (r *Ring) setHandoff(h Handoff) {
	r.hand = h
	r.catchUp, _ = h.(CatchUpper)
}

// The values of Ring.own.
const (
	ownFree uint32 = iota
	ownProducer
	ownConsumer
)

// store is one generation of a ring's storage.
type store struct {
	mask uint64
	b    []byte
}

// MinStorage is the smallest storage a ring gets: one cache line.
const MinStorage = 64

// Handoff publishes a ring's writes to its consumer: Publish(tail) at
// once (real time), or at the producer's time (virtual time: the driver
// schedules an event that calls Publish). at is the producer's clock.
type Handoff interface {
	Handoff(r *Ring, tail uint64, at time.Duration)
}

// Max returns the most bytes the ring holds.
func (r *Ring) Max() int { return int(r.max) }

// Len returns the published bytes not yet consumed.
func (r *Ring) Len() int { return int(r.tail.Load() - r.head.Load()) }

// InFlight returns the bytes written but not yet published.
func (r *Ring) InFlight() int { return int(r.written.Load() - r.tail.Load()) }

// used returns the bytes written and not consumed (producer side).
func (r *Ring) used() uint64 { return r.written.Load() - r.head.Load() }

// Space returns the free bytes of the current storage, or max before
// the first write (producer side).
func (r *Ring) Space() int {
	if s := r.buf.Load(); s != nil {
		return len(s.b) - int(r.used())
	}
	return int(r.max)
}

// Reserve makes the storage at least want bytes (at most max) when the
// ring is empty, so that a larger write fits at once (producer only;
// with a Storage, between acquire and release).
func (r *Ring) Reserve(want int) {
	s := r.buf.Load()
	if s != nil && (len(s.b) >= want || len(s.b) >= int(r.max)) {
		return
	}
	if s != nil && r.used() != 0 {
		return // not empty: the consumer may be reading s
	}
	if s == nil {
		want = max(want, int(r.last))
	}
	n := MinStorage
	for n < want && n < int(r.max) {
		n <<= 1
	}
	n = min(n, int(r.max))
	if s != nil && n <= len(s.b) {
		return
	}
	if r.storage == nil {
		r.buf.Store(&store{mask: uint64(n - 1), b: make([]byte, n)})
		return
	}
	r.buf.Store(r.storage.get(n))
	if s != nil {
		r.storage.put(s) // empty, and the consumer loads storage only for bytes it has not read
	}
}

// acquire gives the producer the storage for a write (a no-op but on a
// guarded ring); a consumer releasing it holds it for a few instructions.
func (r *Ring) acquire() {
	if !r.guarded {
		return
	}
	for !r.own.CompareAndSwap(ownFree, ownProducer) {
		runtime.Gosched()
	}
}

// release ends the producer's write.
func (r *Ring) release() {
	if r.guarded {
		r.own.Store(ownFree)
	}
}

// releaseDrained gives the storage back to the Storage when every byte
// written has been consumed: as the producer (consumer false), or as the
// consumer of a guarded ring, which holds own to do it and leaves the
// storage to the next call if the producer is writing.
func (r *Ring) releaseDrained(consumer bool) {
	if r.storage == nil || r.written.Load() != r.head.Load() || r.buf.Load() == nil {
		return
	}
	if consumer {
		if !r.guarded || !r.own.CompareAndSwap(ownFree, ownConsumer) {
			return
		}
		defer r.own.Store(ownFree)
		if r.written.Load() != r.head.Load() {
			return
		}
	}
	if s := r.buf.Swap(nil); s != nil {
		r.last = int32(len(s.b))
		r.storage.put(s)
	}
}

// Writable returns the first contiguous free region (producer side).
func (r *Ring) Writable() []byte {
	s := r.buf.Load()
	if s == nil {
		r.Reserve(MinStorage)
		s = r.buf.Load()
	}
	w := r.written.Load()
	free := uint64(len(s.b)) - (w - r.head.Load())
	off := w & s.mask
	n := min(free, uint64(len(s.b))-off)
	return s.b[off : off+n]
}

// Commit adds n bytes written into Writable's region to what the next
// Flush hands off (producer side).
func (r *Ring) Commit(n int) { r.written.Add(uint64(n)) }

// Flush hands what was committed to the consumer at the producer's
// clock at (ignored by an immediate hand-off).
func (r *Ring) Flush(at time.Duration) {
	w := r.written.Load()
	if w == r.tail.Load() {
		return
	}
	if r.hand == nil {
		r.tail.Store(w)
		return
	}
	r.hand.Handoff(r, w, at)
}

// Publish makes the bytes up to tail visible to the consumer (the
// hand-off's delivery) and reports whether that made any new. A tail at
// or behind the published one is a no-op, so deliveries may arrive in
// any order.
func (r *Ring) Publish(tail uint64) bool {
	if tail > r.tail.Load() {
		r.tail.Store(tail)
		return true
	}
	return false
}

// CatchUpper is an optional part of a Handoff, for a driver whose sides
// run on clocks of their own: CatchUp delivers at once what the producer
// handed off at or before now, the consumer's clock. In virtual time a
// simulated core's clock runs ahead of the engine during its turn, and a
// consumer whose clock passed a write's sees it, as it would on real
// cores; the hand-off's own delivery then finds nothing new.
type CatchUpper interface {
	CatchUp(r *Ring, now time.Duration)
}

// Sync lets the consumer, at its clock now, see every hand-off due by
// then (consumer side; a no-op unless the hand-off is a CatchUpper).
func (r *Ring) Sync(now time.Duration) {
	if r.catchUp != nil {
		r.catchUp.CatchUp(r, now)
	}
}

// Write copies as much of p as fits, commits it and flushes at at; it
// returns the count (producer side).
func (r *Ring) Write(p []byte, at time.Duration) int {
	r.acquire()
	r.Reserve(len(p))
	total := 0
	for len(p) > 0 {
		w := r.Writable()
		if len(w) == 0 {
			break
		}
		n := copy(w, p)
		r.Commit(n)
		p = p[n:]
		total += n
	}
	r.release()
	r.Flush(at)
	return total
}

// Readable returns the first contiguous published region (consumer
// side). The tail is loaded before the storage (see Ring).
func (r *Ring) Readable() []byte {
	h := r.head.Load()
	used := r.tail.Load() - h
	if used == 0 {
		return nil
	}
	s := r.buf.Load()
	off := h & s.mask
	n := min(used, uint64(len(s.b))-off)
	return s.b[off : off+n]
}

// Consume releases n bytes returned by Readable.
func (r *Ring) Consume(n int) { r.head.Add(uint64(n)) }

// Read copies up to len(p) published bytes out and returns the count
// (consumer side).
func (r *Ring) Read(p []byte) int {
	total := 0
	for len(p) > 0 {
		b := r.Readable()
		if len(b) == 0 {
			break
		}
		n := copy(p, b)
		r.Consume(n)
		p = p[n:]
		total += n
	}
	return total
}
