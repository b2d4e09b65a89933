package rt

import (
	"sync/atomic"

	"github.com/savanna-sim/savanna/hw"
)

// mbufRing is a bounded single-producer single-consumer ring of mbufs,
// carrying ARP copies from one lcore to another.
type mbufRing struct {
	head atomic.Uint64
	_    [56]byte
	tail atomic.Uint64
	_    [56]byte
	mask uint64
	slot []*hw.Mbuf
}

func newMbufRing(size int) *mbufRing {
	return &mbufRing{mask: uint64(size - 1), slot: make([]*hw.Mbuf, size)}
}

func (r *mbufRing) enqueue(m *hw.Mbuf) bool {
	t := r.tail.Load()
	if t-r.head.Load() > r.mask {
		return false
	}
	r.slot[t&r.mask] = m
	r.tail.Store(t + 1)
	return true
}

func (r *mbufRing) dequeueBurst(dst []*hw.Mbuf) int {
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
