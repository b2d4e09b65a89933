package ringdev

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/savanna-sim/savanna/hw"
)

// cacheLinePad keeps indexes written by different goroutines on separate
// cache lines so that they do not false-share (rte_ring's and
// rte_mempool's __rte_cache_aligned fields).
type cacheLinePad [64]byte

// Mempool is a thread-safe hw.Mempool: a bounded multi-producer
// multi-consumer queue of free mbufs (Dmitry Vyukov's bounded MPMC queue,
// the algorithm family of DPDK's ring_mp_mc mempool handler). Get and Put
// take no lock and allocate nothing, so any goroutine may free an mbuf it
// was handed through a ring, as DPDK lcores do.
type Mempool struct {
	name string
	room int
	size int
	mask uint64
	_    cacheLinePad
	enq  atomic.Uint64
	_    cacheLinePad
	deq  atomic.Uint64
	_    cacheLinePad
	cell []poolCell

	gets  atomic.Uint64
	fails atomic.Uint64
	avail atomic.Int64
	lost  atomic.Uint64
}

type poolCell struct {
	seq atomic.Uint64
	m   *hw.Mbuf
}

// NewMempool makes a pool of n mbufs with room bytes of data room each
// (headroom included), like rte_pktmbuf_pool_create. n is rounded up to a
// power of two for the queue; exactly n mbufs exist.
func NewMempool(name string, n, room int) (*Mempool, error) {
	if n <= 0 || n > 1<<24 {
		return nil, fmt.Errorf("ringdev mempool %q: %d mbufs is outside 1..%d", name, n, 1<<24)
	}
	if room <= hw.DefaultHeadroom || room > 1<<20 {
		return nil, fmt.Errorf("ringdev mempool %q: data room %d is outside %d..%d", name, room, hw.DefaultHeadroom+1, 1<<20)
	}
	size := 1
	for size < n {
		size <<= 1
	}
	p := &Mempool{name: name, room: room, size: n, mask: uint64(size - 1), cell: make([]poolCell, size)}
	for i := range p.cell {
		p.cell[i].seq.Store(uint64(i))
	}
	// One backing array for all data rooms, as a mempool is one memzone.
	mem := make([]byte, n*room)
	bufs := make([]hw.Mbuf, n)
	for i := range bufs {
		m := &bufs[i]
		m.Buf = mem[i*room : (i+1)*room : (i+1)*room]
		m.Pool = p
		p.push(m)
	}
	p.avail.Store(int64(n))
	return p, nil
}

func (p *Mempool) push(m *hw.Mbuf) {
	spins := 0
	pos := p.enq.Load()
	for {
		c := &p.cell[pos&p.mask]
		seq := c.seq.Load()
		switch dif := int64(seq) - int64(pos); {
		case dif == 0:
			if p.enq.CompareAndSwap(pos, pos+1) {
				c.m = m
				c.seq.Store(pos + 1)
				return
			}
			pos = p.enq.Load()
		case dif < 0:
			// The cell still holds an mbuf of the previous lap: a
			// consumer took the position but has not released the cell
			// yet (the queue can never be truly full, it has room for
			// every mbuf of the pool). Wait for it; only a double free
			// could make this last, and that is counted and dropped.
			spins++
			if spins > 1<<16 {
				p.lost.Add(1)
				return
			}
			runtime.Gosched()
			pos = p.enq.Load()
		default:
			pos = p.enq.Load()
		}
	}
}

func (p *Mempool) pop() *hw.Mbuf {
	pos := p.deq.Load()
	for {
		c := &p.cell[pos&p.mask]
		seq := c.seq.Load()
		switch dif := int64(seq) - int64(pos+1); {
		case dif == 0:
			if p.deq.CompareAndSwap(pos, pos+1) {
				m := c.m
				c.m = nil
				c.seq.Store(pos + p.mask + 1)
				return m
			}
			pos = p.deq.Load()
		case dif < 0:
			if p.enq.Load() == pos {
				return nil // empty
			}
			// A producer took the position but has not filled the cell.
			runtime.Gosched()
			pos = p.deq.Load()
		default:
			pos = p.deq.Load()
		}
	}
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
				p.push(back)
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

// Put implements hw.Mempool. Mbufs of other pools are ignored.
func (p *Mempool) Put(m *hw.Mbuf) {
	if m == nil || m.Pool != hw.Mempool(p) {
		return
	}
	m.Next = nil
	p.avail.Add(1)
	p.push(m)
}

// Lost returns how many mbufs were dropped by Put because the queue
// could not take them (only a double free can cause it).
func (p *Mempool) Lost() uint64 { return p.lost.Load() }

// Stats implements hw.Mempool.
func (p *Mempool) Stats() hw.MempoolStats {
	a := int(p.avail.Load())
	return hw.MempoolStats{Size: p.size, Available: a, InUse: p.size - a,
		Gets: p.gets.Load(), FailedGets: p.fails.Load()}
}

var _ hw.Mempool = (*Mempool)(nil)
