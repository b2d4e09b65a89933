//go:build dpdk

package dpdk

/*
#include "sv_dpdk.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
)

// bulkChunk is how many mbufs GetBulk takes per call into C.
const bulkChunk = 64

// MempoolStats are the driver's own counters beside hw.MempoolStats.
type MempoolStats struct {
	// ForeignPuts counts Put calls with an mbuf that is not this pool's
	// (ignored rather than corrupting a DPDK pool).
	ForeignPuts uint64 `json:"foreign_puts"`
	// Cached is the number of mbufs parked in per-lcore caches now:
	// non-zero only when threads registered with the EAL (RegisterThread,
	// the real-time driver's lcores through ThreadHook) use the pool.
	Cached uint64 `json:"cached"`
}

// Mempool is an hw.Mempool over an rte_pktmbuf pool. Every rte_mbuf of
// the pool has a twin hw.Mbuf made when the pool is made: Buf views the
// rte_mbuf's buffer, Handle is its address, Pool is this pool. Get, Put
// and the bursts hand out the twins, so nothing is allocated per packet.
//
// It is safe for concurrent use, as DPDK's default ring_mp_mc pool is;
// threads registered with RegisterThread also get the per-lcore cache.
type Mempool struct {
	eal  *EAL
	mp   *C.struct_rte_mempool
	no   uint32
	name string
	node int
	room int
	size int

	twins []hw.Mbuf

	gets        atomic.Uint64
	failedGets  atomic.Uint64
	foreignPuts atomic.Uint64

	bulk sync.Pool // *[bulkChunk]C.uint32_t scratch for GetBulk
}

// NewMempool makes a packet mbuf pool (rte_pktmbuf_pool_create) on
// cfg.Socket, or on the calling thread's socket for AnySocket. To put a
// port's rx pool on the port's socket, pass EthDev.Socket.
func (e *EAL) NewMempool(cfg MempoolConfig) (*Mempool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("dpdk: mempool %q: %w", cfg.Name, err)
	}
	socket := cfg.Socket
	if socket == AnySocket {
		socket = e.SocketID()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	old := *e.pools.Load()
	no := uint32(len(old))

	ptrs := make([]*C.struct_rte_mbuf, cfg.Size)
	cname := C.CString(cfg.Name)
	defer C.free(unsafe.Pointer(cname))
	var cerr C.int
	mp := C.sv_pool_create(cname, C.uint(cfg.Size), C.uint(cfg.Cache), C.uint16_t(cfg.DataRoom),
		C.int(socket), C.uint32_t(no), &ptrs[0], &cerr)
	if mp == nil {
		return nil, fmt.Errorf("dpdk: rte_pktmbuf_pool_create %q (%d mbufs of %d bytes on socket %d): %w",
			cfg.Name, cfg.Size, cfg.DataRoom, socket, errnoErr(cerr))
	}
	p := &Mempool{eal: e, mp: mp, no: no, name: cfg.Name, node: socket, room: cfg.DataRoom, size: cfg.Size}
	p.bulk.New = func() any { return new([bulkChunk]C.uint32_t) }
	p.twins = make([]hw.Mbuf, cfg.Size)
	for i, m := range ptrs {
		t := &p.twins[i]
		t.Buf = unsafe.Slice((*byte)(C.sv_buf_addr(m)), int(C.sv_buf_len(m)))
		t.Handle = uintptr(unsafe.Pointer(m))
		t.Pool = p
		t.Reset()
	}
	table := make([]*Mempool, len(old)+1)
	copy(table, old)
	table[no] = p
	e.pools.Store(&table)
	return p, nil
}

// twinOf returns the hw.Mbuf of rte_mbuf m, which must be this pool's.
// The index is read from the private area in Go: rte_mbuf_to_priv is
// the address just past struct rte_mbuf, and a call into C would cost
// more than the read.
func (p *Mempool) twinOf(m *C.struct_rte_mbuf) *hw.Mbuf {
	priv := (*C.struct_sv_priv)(unsafe.Add(unsafe.Pointer(m), C.sizeof_struct_rte_mbuf))
	return &p.twins[priv.idx]
}

// handout resets twin t for a caller that just took its rte_mbuf.
func handout(t *hw.Mbuf) *hw.Mbuf {
	t.Reset()
	t.RefCnt = 1
	return t
}

// Name implements hw.Mempool.
func (p *Mempool) Name() string { return p.name }

// NUMANode implements hw.Mempool: the socket the pool was made on.
func (p *Mempool) NUMANode() int { return p.node }

// DataRoom implements hw.Mempool.
func (p *Mempool) DataRoom() int { return p.room }

// Get implements hw.Mempool (rte_pktmbuf_alloc).
func (p *Mempool) Get() *hw.Mbuf {
	m := C.sv_pktmbuf_alloc(p.mp)
	if m == nil {
		p.failedGets.Add(1)
		return nil
	}
	p.gets.Add(1)
	return handout(p.twinOf(m))
}

// GetBulk implements hw.Mempool (rte_pktmbuf_alloc_bulk, in chunks of 64;
// a chunk that fails returns the earlier ones, so it is all or nothing).
func (p *Mempool) GetBulk(ms []*hw.Mbuf) bool {
	scratch := p.bulk.Get().(*[bulkChunk]C.uint32_t)
	defer p.bulk.Put(scratch)
	for done := 0; done < len(ms); {
		n := min(len(ms)-done, bulkChunk)
		if C.sv_pktmbuf_alloc_bulk(p.mp, &scratch[0], C.uint(n)) != 0 {
			for _, t := range ms[:done] {
				C.sv_free_seg(C.uintptr_t(t.Handle))
				t.RefCnt = 0
			}
			clear(ms[:done])
			p.failedGets.Add(uint64(len(ms)))
			return false
		}
		for i, idx := range scratch[:n] {
			ms[done+i] = handout(&p.twins[idx])
		}
		done += n
	}
	p.gets.Add(uint64(len(ms)))
	return true
}

// Put implements hw.Mempool: it drops one DPDK reference on the segment
// (rte_pktmbuf_free_seg), which returns it to the pool at zero. hw.Mbuf.Free
// calls it when the Go-side count reaches zero; a device that still holds
// the segment (a TxBurst in flight) holds the other DPDK reference.
func (p *Mempool) Put(m *hw.Mbuf) {
	if m == nil || m.Pool != hw.Mempool(p) || m.Handle == 0 {
		p.foreignPuts.Add(1)
		return
	}
	C.sv_free_seg(C.uintptr_t(m.Handle))
}

// Stats implements hw.Mempool (rte_mempool_avail_count and
// rte_mempool_in_use_count; mbufs in per-lcore caches count as available).
func (p *Mempool) Stats() hw.MempoolStats {
	return hw.MempoolStats{
		Size:       p.size,
		Available:  int(C.sv_pool_avail(p.mp)),
		InUse:      int(C.sv_pool_in_use(p.mp)),
		Gets:       p.gets.Load(),
		FailedGets: p.failedGets.Load(),
	}
}

// DriverStats returns the driver's own counters.
func (p *Mempool) DriverStats() MempoolStats {
	return MempoolStats{ForeignPuts: p.foreignPuts.Load(), Cached: uint64(C.sv_pool_cached(p.mp))}
}
