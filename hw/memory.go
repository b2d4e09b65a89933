package hw

import "errors"

// Hugepage sizes, as Linux offers them on x86-64 and arm64.
const (
	Hugepage2M int64 = 2 << 20
	Hugepage1G int64 = 1 << 30
)

// ErrNoHugepages is wrapped by HugeMemory.Alloc when a node's pool cannot
// satisfy a request; the wrapping error names the node, the size asked for
// and what was free.
var ErrNoHugepages = errors.New("hugepages exhausted")

// ErrNotContiguous is wrapped when a caller asks for physically contiguous
// memory larger than one hugepage of the pool's size.
var ErrNotContiguous = errors.New("contiguous memory larger than one hugepage")

// AllocRequest describes one allocation of hugepage memory.
type AllocRequest struct {
	// Node is the NUMA node to allocate on (rte_malloc_socket's socket).
	Node int
	// Size is the number of bytes wanted.
	Size int64
	// PageSize is the hugepage size to take the memory from (Hugepage2M
	// or Hugepage1G).
	PageSize int64
	// Contiguous asks for physically contiguous memory, as DMA by a
	// device needs (RTE_MEMZONE_IOVA_CONTIG). A request larger than one
	// page of PageSize cannot be contiguous and is refused.
	Contiguous bool
	// Owner names who takes the memory (a mempool, a process), for
	// accounting and leak reports.
	Owner string
}

// Region is an allocation of hugepage memory.
type Region struct {
	Node       int
	Size       int64
	PageSize   int64
	Pages      int64 // hugepages the region holds
	Contiguous bool
	Owner      string
	// IOVA is the device-visible address of the region's start
	// (rte_malloc_virt2iova); for a non-contiguous region, of the first
	// page.
	IOVA uint64
	// Handle is private to the allocator.
	Handle uintptr
}

// HugeMemory mirrors the EAL's NUMA-aware hugepage memory
// (rte_memzone_reserve / rte_malloc_socket over hugetlbfs pages reserved
// per node with nr_hugepages). It accounts for pages and does not hand
// out bytes: whoever needs the bytes (a mempool, a pinned buffer) keeps
// them, sized by the region.
type HugeMemory interface {
	// Alloc takes pages for req or returns an error wrapping
	// ErrNoHugepages or ErrNotContiguous.
	Alloc(req AllocRequest) (*Region, error)
	// Free returns a region's pages to their node's pool.
	Free(r *Region) error
	// NodeOf returns the NUMA node of a CPU (rte_lcore_to_socket_id).
	NodeOf(cpu int) int
}
