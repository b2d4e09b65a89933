package hw

// Mempool mirrors an rte_mempool of packet mbufs created by
// rte_pktmbuf_pool_create: a fixed number of fixed-size mbufs on one NUMA
// node. Get and Put are the single-object forms of rte_pktmbuf_alloc and
// rte_pktmbuf_free_seg; the bulk forms mirror rte_pktmbuf_alloc_bulk and
// rte_mempool_put_bulk.
//
// A Mempool belongs to one lcore at a time unless its implementation says
// otherwise (DPDK pools with a per-lcore cache behave the same way).
type Mempool interface {
	// Name is the pool's name, unique on its host.
	Name() string
	// NUMANode is the node whose memory backs the pool (socket_id).
	NUMANode() int
	// DataRoom is the size of each mbuf's buffer, headroom included
	// (data_room_size).
	DataRoom() int
	// Get takes one mbuf, reset and with a reference count of one, or
	// returns nil when the pool is empty; an empty pool counts a failed
	// get.
	Get() *Mbuf
	// GetBulk fills all of ms or none of them, as rte_pktmbuf_alloc_bulk
	// does, and reports whether it did.
	GetBulk(ms []*Mbuf) bool
	// Put returns one mbuf to the pool. Callers normally use Mbuf.Free,
	// which honours reference counts and chains.
	Put(m *Mbuf)
	// Stats returns the pool's counters.
	Stats() MempoolStats
}

// MempoolStats are a mempool's counters (rte_mempool_avail_count,
// rte_mempool_in_use_count, and the get_fail statistics).
type MempoolStats struct {
	Size       int    // mbufs in the pool
	Available  int    // mbufs free
	InUse      int    // mbufs taken and not returned
	Gets       uint64 // successful gets of one mbuf
	FailedGets uint64 // gets refused because the pool was empty
}
