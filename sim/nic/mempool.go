package nic

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
)

// Mempool is an mbuf pool built as rte_pktmbuf_pool_create builds one: a
// fixed number of mbufs of a fixed data room, on one NUMA node, in
// hugepage memory taken from an hw.HugeMemory. The hugepage region is
// taken whole when the pool is made, as DPDK's is; the Go bytes behind
// it are allocated a slab of slabMbufs mbufs at a time, the first time
// Get hands out an mbuf of the slab, so a pool that a run (or simrun
// validate, which runs nothing) never fills costs little real memory.
// Once a slab is made, Get and Put allocate nothing.
//
// A Mempool is not safe for concurrent use; like a DPDK pool used without
// a per-lcore cache from one lcore, it belongs to one thread of the
// engine.
type Mempool struct {
	name     string
	node     int
	dataRoom int
	mem      hw.HugeMemory
	region   *hw.Region

	mbufs  []hw.Mbuf
	inPool []bool     // per mbuf: is it on the free stack
	free   []*hw.Mbuf // free stack
	stats  MempoolCounters
	freed  bool
}

// MempoolCounters are a pool's counters, beyond hw.MempoolStats: the
// misuse the pool refused without corrupting itself.
type MempoolCounters struct {
	Size       int    `json:"size"`
	Available  int    `json:"available"`
	InUse      int    `json:"in_use"`
	Gets       uint64 `json:"gets"`
	FailedGets uint64 `json:"failed_gets"`
	Puts       uint64 `json:"puts"`
	// ForeignPuts counts Puts of an mbuf this pool does not own.
	ForeignPuts uint64 `json:"foreign_puts"`
	// DoublePuts counts Puts of an mbuf already in the pool (a double
	// free).
	DoublePuts uint64 `json:"double_puts"`
}

// NewMempool creates a pool of n mbufs of dataRoom bytes each (headroom
// included, as rte_pktmbuf_pool_create's data_room_size) on NUMA node
// node, taking n*dataRoom bytes of 2 MiB hugepages from mem under the
// pool's name. It fails, wrapping the allocator's error, when the node's
// hugepages cannot hold it.
func NewMempool(name string, n, dataRoom, node int, mem hw.HugeMemory) (*Mempool, error) {
	if n <= 0 {
		return nil, fmt.Errorf("mempool %q: %d mbufs: must be positive", name, n)
	}
	if dataRoom <= hw.DefaultHeadroom {
		return nil, fmt.Errorf("mempool %q: data room %d: must exceed the %d-byte headroom", name, dataRoom, hw.DefaultHeadroom)
	}
	if mem == nil {
		return nil, fmt.Errorf("mempool %q: no hugepage memory", name)
	}
	region, err := mem.Alloc(hw.AllocRequest{
		Node:     node,
		Size:     int64(n) * int64(dataRoom),
		PageSize: hw.Hugepage2M,
		Owner:    name,
	})
	if err != nil {
		return nil, fmt.Errorf("mempool %q: %d mbufs of %d bytes on node %d: %w", name, n, dataRoom, node, err)
	}
	p := &Mempool{
		name: name, node: node, dataRoom: dataRoom, mem: mem, region: region,
		mbufs:  make([]hw.Mbuf, n),
		inPool: make([]bool, n),
		free:   make([]*hw.Mbuf, 0, n),
	}
	// Push in reverse so that Get hands out mbuf 0 first.
	for i := n - 1; i >= 0; i-- {
		m := &p.mbufs[i]
		m.Pool = p
		m.Handle = uintptr(i + 1)
		p.inPool[i] = true
		p.free = append(p.free, m)
	}
	p.stats.Size = n
	return p, nil
}

// slabMbufs is how many mbufs' buffers are allocated together: at the
// default 2176-byte data room, a little over 1 MiB a slab.
const slabMbufs = 512

// backSlab gives the mbufs of the slab that holds mbuf i their buffers.
func (p *Mempool) backSlab(i int) {
	first := i / slabMbufs * slabMbufs
	last := min(first+slabMbufs, len(p.mbufs))
	slab := make([]byte, (last-first)*p.dataRoom)
	for j := first; j < last; j++ {
		off := (j - first) * p.dataRoom
		p.mbufs[j].Buf = slab[off : off+p.dataRoom : off+p.dataRoom]
	}
}

// Name implements hw.Mempool.
func (p *Mempool) Name() string { return p.name }

// NUMANode implements hw.Mempool.
func (p *Mempool) NUMANode() int { return p.node }

// DataRoom implements hw.Mempool.
func (p *Mempool) DataRoom() int { return p.dataRoom }

// Region returns the hugepage region backing the pool.
func (p *Mempool) Region() *hw.Region { return p.region }

// Get implements hw.Mempool: a reset mbuf with one reference, or nil.
func (p *Mempool) Get() *hw.Mbuf {
	n := len(p.free)
	if n == 0 {
		p.stats.FailedGets++
		return nil
	}
	m := p.free[n-1]
	p.free = p.free[:n-1]
	p.inPool[m.Handle-1] = false
	if m.Buf == nil {
		p.backSlab(int(m.Handle) - 1)
	}
	m.Reset()
	m.RefCnt = 1
	p.stats.Gets++
	return m
}

// GetBulk implements hw.Mempool: all of ms or none.
func (p *Mempool) GetBulk(ms []*hw.Mbuf) bool {
	if len(ms) > len(p.free) {
		p.stats.FailedGets++
		return false
	}
	for i := range ms {
		ms[i] = p.Get()
	}
	return true
}

// owns returns the index of m in the pool, or -1 when m is not one of
// the pool's mbufs.
func (p *Mempool) owns(m *hw.Mbuf) int {
	if m == nil || m.Pool != hw.Mempool(p) {
		return -1
	}
	i := int(m.Handle) - 1
	if i < 0 || i >= len(p.mbufs) || &p.mbufs[i] != m {
		return -1
	}
	return i
}

// Put implements hw.Mempool. An mbuf the pool does not own, or one
// already returned, is counted and ignored: the pool stays consistent.
func (p *Mempool) Put(m *hw.Mbuf) {
	i := p.owns(m)
	if i < 0 {
		p.stats.ForeignPuts++
		return
	}
	if p.inPool[i] {
		p.stats.DoublePuts++
		return
	}
	p.inPool[i] = true
	m.RefCnt = 0
	m.Next = nil
	p.free = append(p.free, m)
	p.stats.Puts++
}

// Stats implements hw.Mempool.
func (p *Mempool) Stats() hw.MempoolStats {
	c := p.Counters()
	return hw.MempoolStats{Size: c.Size, Available: c.Available, InUse: c.InUse, Gets: c.Gets, FailedGets: c.FailedGets}
}

// Counters returns all of the pool's counters.
func (p *Mempool) Counters() MempoolCounters {
	c := p.stats
	c.Available = len(p.free)
	c.InUse = c.Size - c.Available
	return c
}

// Free returns the pool's hugepages to their node (rte_mempool_free).
// Mbufs still in use keep their bytes (Go memory) but the pool no longer
// accounts for them; Free reports them as an error so that leaks are
// seen. Freeing twice is an error.
func (p *Mempool) Free() error {
	if p.freed {
		return fmt.Errorf("mempool %q: freed twice", p.name)
	}
	p.freed = true
	if err := p.mem.Free(p.region); err != nil {
		return fmt.Errorf("mempool %q: free hugepages: %w", p.name, err)
	}
	if inUse := len(p.mbufs) - len(p.free); inUse != 0 {
		return fmt.Errorf("mempool %q: freed with %d of %d mbufs still in use", p.name, inUse, len(p.mbufs))
	}
	return nil
}
