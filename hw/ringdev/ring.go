package ringdev

import (
	"sync/atomic"

	"github.com/savanna-sim/savanna/hw"
)

// cacheLinePad keeps the producer and consumer indexes on separate cache
// lines so that the two sides do not false-share (rte_ring's
// __rte_cache_aligned head and tail).
type cacheLinePad [64]byte

// spsc is a bounded single-producer single-consumer ring of mbufs
// (rte_ring with RING_F_SP_ENQ | RING_F_SC_DEQ). Its size is a power of
// two. The producer owns tail, the consumer owns head; each publishes its
// index with a release store and reads the other's with an acquire load.
type spsc struct {
	_    cacheLinePad
	head atomic.Uint64 // next slot to dequeue, written by the consumer
	_    cacheLinePad
	tail atomic.Uint64 // next slot to enqueue, written by the producer
	_    cacheLinePad
	mask uint64
	slot []*hw.Mbuf
}

func newSPSC(size int) *spsc {
	return &spsc{mask: uint64(size - 1), slot: make([]*hw.Mbuf, size)}
}

// enqueue adds m and reports whether there was room.
func (r *spsc) enqueue(m *hw.Mbuf) bool {
	t := r.tail.Load()
	if t-r.head.Load() > r.mask {
		return false
	}
	r.slot[t&r.mask] = m
	r.tail.Store(t + 1)
	return true
}

// dequeueBurst moves up to len(dst) mbufs into dst and returns how many.
func (r *spsc) dequeueBurst(dst []*hw.Mbuf) int {
	h := r.head.Load()
	n := int(min(r.tail.Load()-h, uint64(len(dst))))
	for i := 0; i < n; i++ {
		s := &r.slot[(h+uint64(i))&r.mask]
		dst[i] = *s
		*s = nil
	}
	r.head.Store(h + uint64(n))
	return n
}

// count returns the entries in the ring (approximate while both sides run).
func (r *spsc) count() int { return int(r.tail.Load() - r.head.Load()) }
