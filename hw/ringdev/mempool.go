package ringdev

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
)

// cacheLinePad keeps indexes written by different goroutines on separate
// cache lines so that they do not false-share (rte_ring's and
// rte_mempool's __rte_cache_aligned fields).
type cacheLinePad [64]byte

// Mempool is a thread-safe hw.Mempool: a lock-free stack of free mbufs
// (a Treiber stack over mbuf indexes, its top tagged with a version
// counter against ABA). Get and Put take no lock and allocate nothing, so
// any goroutine may free an mbuf it was handed through a ring, as DPDK
// lcores do.
//
// It is last-in first-out on purpose, as DPDK's per-lcore mempool caches
// are (rte_mempool_cache, "hot" objects): the mbuf freed last is the one
// handed out next, still in the CPU's cache, and a workload that needs
// few mbufs at a time touches only those pages of the pool. A first-in
// first-out queue cycles through every mbuf of the pool, and with
// thousands of them each Get is a cache miss.
type Mempool struct {
	name string
	room int
	size int
	_    cacheLinePad
	// top is (version << 32) | (index of the top mbuf + 1); 0 in the
	// low half means empty.
	top atomic.Uint64
	_   cacheLinePad
	// next[i] is (index of the mbuf below mbuf i) + 1, 0 at the bottom.
	next []atomic.Uint32
	// free[i] is 1 while mbuf i is in the pool: a second Put of the
	// same mbuf (a double free) is refused and counted instead of
	// corrupting the stack.
	free []atomic.Uint32
	bufs []hw.Mbuf
	// mem holds every data room; an mbuf is bound to its room the first
	// time it is handed out (prepare), not at creation.
	mem []byte

	gets  atomic.Uint64
	fails atomic.Uint64
	avail atomic.Int64
	lost  atomic.Uint64
}

// NewMempool makes a pool of n mbufs with room bytes of data room each
// (headroom included), like rte_pktmbuf_pool_create.
func NewMempool(name string, n, room int) (*Mempool, error) {
	if n <= 0 || n > 1<<24 {
		return nil, fmt.Errorf("ringdev mempool %q: %d mbufs is outside 1..%d", name, n, 1<<24)
	}
	if room <= hw.DefaultHeadroom || room > 1<<20 {
		return nil, fmt.Errorf("ringdev mempool %q: data room %d is outside %d..%d", name, room, hw.DefaultHeadroom+1, 1<<20)
	}
	p := &Mempool{name: name, room: room, size: n, next: make([]atomic.Uint32, n),
		free: make([]atomic.Uint32, n), bufs: make([]hw.Mbuf, n)}
	// One backing array for all data rooms, as a mempool is one memzone.
	mem, release := dataRooms(n * room)
	p.mem = mem
	unmapWhenUnreachable(p, release)
	// Push in reverse so that the first Gets return the lowest mbufs.
	// The mbufs themselves are not touched here: each is prepared when
	// first handed out, so that, with the last-in first-out order, the
	// pages of mbuf headers a workload never needs at once are never
	// written and cost no resident memory (the data rooms likewise).
	for i := n - 1; i >= 0; i-- {
		p.push(i)
	}
	p.avail.Store(int64(n))
	return p, nil
}

// index returns m's index in the pool, or -1 when m is not one of its
// mbufs.
func (p *Mempool) index(m *hw.Mbuf) int {
	base := uintptr(unsafe.Pointer(&p.bufs[0]))
	off := uintptr(unsafe.Pointer(m)) - base
	sz := unsafe.Sizeof(hw.Mbuf{})
	if uintptr(unsafe.Pointer(m)) < base || off%sz != 0 || off/sz >= uintptr(len(p.bufs)) {
		return -1
	}
	return int(off / sz)
}

// push puts mbuf i on the stack; it reports false (and counts it) when i
// is already there.
func (p *Mempool) push(i int) bool {
	if !p.free[i].CompareAndSwap(0, 1) {
		p.lost.Add(1)
		return false
	}
	for {
		old := p.top.Load()
		p.next[i].Store(uint32(old))
		nw := (old>>32+1)<<32 | uint64(i+1)
		if p.top.CompareAndSwap(old, nw) {
			return true
		}
	}
}

// pop takes the top mbuf, or nil when the pool is empty. A stale next
// read (the top was taken and put back meanwhile) is harmless: the
// version in top changed, so the compare-and-swap fails and it retries.
func (p *Mempool) pop() *hw.Mbuf {
	for {
		old := p.top.Load()
		t := uint32(old)
		if t == 0 {
			return nil
		}
		i := t - 1
		nx := p.next[i].Load()
		nw := (old>>32+1)<<32 | uint64(nx)
		if p.top.CompareAndSwap(old, nw) {
			p.free[i].Store(0)
			m := &p.bufs[i]
			if m.Buf == nil {
				// First hand-out; the mbuf is ours alone now.
				p.prepare(m, int(i))
			}
			return m
		}
	}
}

// prepare binds mbuf i to its data room and to the pool.
func (p *Mempool) prepare(m *hw.Mbuf, i int) {
	r := p.room
	m.Buf = p.mem[i*r : (i+1)*r : (i+1)*r]
	m.Pool = p
}

// Name implements hw.Mempool.
func (p *Mempool) Name() string { return p.name }

// NUMANode implements hw.Mempool; Go memory has no node, 0 is reported.
func (p *Mempool) NUMANode() int { return 0 }

// DataRoom implements hw.Mempool.
func (p *Mempool) DataRoom() int { return p.room }

// Get implements hw.Mempool.
func (p *Mempool) Get() *hw.Mbuf {
	m := p.pop()
	if m == nil {
		p.fails.Add(1)
		return nil
	}
	p.avail.Add(-1)
	p.gets.Add(1)
	m.Reset()
	m.RefCnt = 1
	return m
}

// GetBulk implements hw.Mempool: all or nothing.
func (p *Mempool) GetBulk(ms []*hw.Mbuf) bool {
	for i := range ms {
		m := p.pop()
		if m == nil {
			for _, back := range ms[:i] {
				p.push(p.index(back))
			}
			clear(ms[:i])
			p.fails.Add(1)
			return false
		}
		m.Reset()
		m.RefCnt = 1
		ms[i] = m
	}
	p.avail.Add(-int64(len(ms)))
	p.gets.Add(uint64(len(ms)))
	return true
}

// Put implements hw.Mempool. Mbufs of other pools are ignored; an mbuf
// already in the pool (a double free) is refused and counted in Lost.
func (p *Mempool) Put(m *hw.Mbuf) {
	if m == nil || m.Pool != hw.Mempool(p) {
		return
	}
	i := p.index(m)
	if i < 0 {
		p.lost.Add(1)
		return
	}
	m.Next = nil
	if p.push(i) {
		p.avail.Add(1)
	}
}

// Lost returns how many Puts were refused: an mbuf put back while
// already in the pool (a double free).
func (p *Mempool) Lost() uint64 { return p.lost.Load() }

// Stats implements hw.Mempool.
func (p *Mempool) Stats() hw.MempoolStats {
	a := int(p.avail.Load())
	return hw.MempoolStats{Size: p.size, Available: a, InUse: p.size - a,
		Gets: p.gets.Load(), FailedGets: p.fails.Load()}
}

var _ hw.Mempool = (*Mempool)(nil)
