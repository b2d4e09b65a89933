// Package spsc is a bounded lock-free single-producer single-consumer
// ring, DPDK's rte_ring created with RING_F_SP_ENQ | RING_F_SC_DEQ: one
// goroutine enqueues, one (possibly another) dequeues, and neither takes
// a lock. Savanna uses it for net_ring-style device queues (hw/ringdev)
// and for ARP frames passed between stack instances (stack/lstack/arpshare).
package spsc

import (
	"fmt"
	"sync/atomic"
)

// cacheLinePad keeps the producer and consumer indexes on separate cache
// lines so that the two sides do not false-share (rte_ring's
// __rte_cache_aligned head and tail).
type cacheLinePad [64]byte

// Ring is a bounded single-producer single-consumer ring of T whose size
// is a power of two. The producer owns tail, the consumer owns head; each
// publishes its index with a release store (atomic Store) and reads the
// other's with an acquire load (atomic Load), so a slot written before
// tail moves is visible to the consumer that sees the new tail, and a
// slot emptied before head moves is free for the producer that sees it.
type Ring[T any] struct {
	_    cacheLinePad
	head atomic.Uint64 // next slot to dequeue, written by the consumer
	_    cacheLinePad
	tail atomic.Uint64 // next slot to enqueue, written by the producer
	_    cacheLinePad
	mask uint64
	slot []T
}

// New returns an empty ring of size slots; size must be a power of two
// (so that an index maps to its slot by a mask, as rte_ring requires).
func New[T any](size int) (*Ring[T], error) {
	if size < 1 || size&(size-1) != 0 {
		return nil, fmt.Errorf("spsc ring of %d slots: want a power of two", size)
	}
	return &Ring[T]{mask: uint64(size - 1), slot: make([]T, size)}, nil
}

// Enqueue adds v and reports whether there was room. Producer only.
func (r *Ring[T]) Enqueue(v T) bool {
	t := r.tail.Load()
	if t-r.head.Load() > r.mask {
		return false
	}
	r.slot[t&r.mask] = v
	r.tail.Store(t + 1)
	return true
}

// DequeueBurst moves up to len(dst) entries into dst, oldest first, and
// returns how many. The emptied slots are zeroed so that the ring keeps
// no reference to what it handed out. Consumer only.
func (r *Ring[T]) DequeueBurst(dst []T) int {
	var zero T
	h := r.head.Load()
	n := int(min(r.tail.Load()-h, uint64(len(dst))))
	for i := 0; i < n; i++ {
		s := &r.slot[(h+uint64(i))&r.mask]
		dst[i] = *s
		*s = zero
	}
	r.head.Store(h + uint64(n))
	return n
}

// Count returns the entries in the ring (approximate while both sides
// run).
func (r *Ring[T]) Count() int { return int(r.tail.Load() - r.head.Load()) }

// Cap returns the ring's size in slots.
func (r *Ring[T]) Cap() int { return len(r.slot) }
