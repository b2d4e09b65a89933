package numa

import (
	"errors"
	"fmt"
	"slices"

	"github.com/savanna-sim/savanna/hw"
)

// Errors of Memory.Free, besides those Alloc wraps from hw.
var (
	// ErrDoubleFree is wrapped when a region is freed a second time.
	ErrDoubleFree = errors.New("hugepage region freed twice")
	// ErrForeignRegion is wrapped when a region did not come from this
	// Memory (or is a copy of one).
	ErrForeignRegion = errors.New("hugepage region not allocated here")
	// ErrBadRequest is wrapped when an allocation request is malformed:
	// an unknown node, a size of zero or less, a page size that is
	// neither 2 MiB nor 1 GiB.
	ErrBadRequest = errors.New("bad hugepage request")
)

// AnyNode in AllocRequest.Node takes the pages from the first node, in id
// order, that can satisfy the request (DPDK's SOCKET_ID_ANY).
const AnyNode = -1

// freedBit marks a Region's Handle once it has been freed, so that a
// second Free of the same region is told apart from a foreign one.
const freedBit = ^(^uintptr(0) >> 1) // the top bit

// IOVA layout: each node's pools live in a window of their own, so
// addresses never overlap and are the same on every run. A node gets
// 16 TiB; its 2 MiB pool starts at the window, its 1 GiB pool 8 TiB in.
const (
	iovaNodeWindow = uint64(1) << 44
	iovaPoolWindow = uint64(1) << 43
	iovaBase       = uint64(1) << 44 // nothing at IOVA 0
)

// pool is one node's hugepages of one size.
type pool struct {
	node     int
	pageSize int64
	iova     uint64 // IOVA of page 0
	// free holds the free page indices as a stack, lowest index on top,
	// so a fresh pool hands out pages 0, 1, 2 ... in order.
	free  []int32
	total int64
	stats PoolStats
}

// live is an allocated region and the pages it holds: first, and for a
// region of more than one page the others in more (kept apart so the
// common one-page region costs no slice).
type live struct {
	region *hw.Region
	pool   *pool
	first  int32
	more   []int32
}

// Memory is the machine's hugepage memory: per node, a pool of 2 MiB
// pages and one of 1 GiB pages, reserved as nr_hugepages would reserve
// them. It implements hw.HugeMemory. It is not safe for concurrent use;
// the virtual-time engine drives it from one goroutine.
type Memory struct {
	topo  *Topology
	pools [][2]*pool // by node position: [0] 2 MiB, [1] 1 GiB
	live  map[uintptr]*live
	next  uintptr
	stats MemoryStats
}

var _ hw.HugeMemory = (*Memory)(nil)

// NewMemory makes the hugepage pools of t. With cfg nil each node gets
// the pages its Topology node reserves (Hugepages2M, Hugepages1G: from
// the preset, the Spec or the host's nr_hugepages); otherwise cfg says
// (see HugepageConfig), and errors name its key.
func NewMemory(t *Topology, cfg *HugepageConfig) (*Memory, error) {
	if cfg != nil {
		var err error
		if t, err = t.WithHugepages(*cfg); err != nil {
			return nil, err
		}
	} else {
		t = t.Clone() // the caller's later edits must not reach the pools' machine
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	m := &Memory{topo: t, live: map[uintptr]*live{}, next: 1}
	for i, n := range t.Nodes {
		var p [2]*pool
		for k, spec := range []struct {
			size  int64
			count int64
		}{{hw.Hugepage2M, n.Hugepages2M}, {hw.Hugepage1G, n.Hugepages1G}} {
			if spec.count > 1<<31-1 || spec.count*spec.size > int64(iovaPoolWindow) {
				return nil, fmt.Errorf("hugepages: node %d: %d pages of %s are more than the model holds (%s)",
					n.ID, spec.count, FormatSize(spec.size), FormatSize(int64(iovaPoolWindow)))
			}
			pl := &pool{
				node:     n.ID,
				pageSize: spec.size,
				iova:     iovaBase + uint64(i)*iovaNodeWindow + uint64(k)*iovaPoolWindow,
				free:     make([]int32, spec.count),
				total:    spec.count,
			}
			for j := range pl.free {
				pl.free[j] = int32(spec.count - 1 - int64(j))
			}
			pl.stats = PoolStats{PageSize: spec.size, TotalPages: spec.count, FreePages: spec.count}
			p[k] = pl
		}
		m.pools = append(m.pools, p)
	}
	return m, nil
}

// Topology returns the machine the memory belongs to, with the hugepage
// counts in use.
func (m *Memory) Topology() *Topology { return m.topo }

// NodeOf returns the NUMA node of a CPU, or -1 for an unknown CPU.
func (m *Memory) NodeOf(cpu int) int { return m.topo.NodeOfCPU(cpu) }

func poolIndex(pageSize int64) int {
	switch pageSize {
	case hw.Hugepage2M:
		return 0
	case hw.Hugepage1G:
		return 1
	}
	return -1
}

// Alloc takes whole hugepages for req. A PageSize of 0 means 2 MiB. The
// region holds ceil(Size/PageSize) pages. It is physically contiguous
// when it fits in one page; a Contiguous request larger than one page is
// refused with an error wrapping hw.ErrNotContiguous (pages of a hugetlbfs
// pool are contiguous only within themselves). When the node has too few
// free pages the error wraps hw.ErrNoHugepages and names the node, the
// size asked for and what was free.
func (m *Memory) Alloc(req hw.AllocRequest) (*hw.Region, error) {
	if req.PageSize == 0 {
		req.PageSize = hw.Hugepage2M
	}
	k := poolIndex(req.PageSize)
	if k < 0 {
		m.stats.BadRequests++
		return nil, fmt.Errorf("node %d: page size %d: want 2 MiB or 1 GiB: %w", req.Node, req.PageSize, ErrBadRequest)
	}
	if req.Size <= 0 {
		m.stats.BadRequests++
		return nil, fmt.Errorf("node %d: size %d: want more than 0 bytes: %w", req.Node, req.Size, ErrBadRequest)
	}
	if req.Node == AnyNode {
		return m.allocAny(req, k)
	}
	ni := m.topo.nodeIndex(req.Node)
	if ni < 0 {
		m.stats.BadRequests++
		return nil, fmt.Errorf("node %d: no such node (nodes %s): %w", req.Node, FormatList(m.topo.NodeIDs()), ErrBadRequest)
	}
	return m.allocFrom(m.pools[ni][k], req)
}

// allocAny tries every node in id order and reports the first node's
// failure if none can serve.
func (m *Memory) allocAny(req hw.AllocRequest, k int) (*hw.Region, error) {
	pages := pagesFor(req.Size, req.PageSize)
	for _, p := range m.pools {
		if int64(len(p[k].free)) >= pages {
			req.Node = p[k].node
			return m.allocFrom(p[k], req)
		}
	}
	req.Node = m.pools[0][k].node
	_, err := m.allocFrom(m.pools[0][k], req)
	return nil, fmt.Errorf("any node: no node can serve it; first refusal: %w", err)
}

func pagesFor(size, pageSize int64) int64 { return (size + pageSize - 1) / pageSize }

func (m *Memory) allocFrom(p *pool, req hw.AllocRequest) (*hw.Region, error) {
	pages := pagesFor(req.Size, req.PageSize)
	if req.Contiguous && pages > 1 {
		p.stats.RefusedContiguous++
		return nil, fmt.Errorf("node %d: %s asked contiguous in %s pages, but one page holds %s and a larger region spans pages that are not adjacent: %w",
			p.node, FormatSize(req.Size), FormatSize(p.pageSize), FormatSize(p.pageSize), hw.ErrNotContiguous)
	}
	if int64(len(p.free)) < pages {
		p.stats.Failed++
		return nil, fmt.Errorf("node %d: %s asked in %s pages, %s free of %s: %w",
			p.node, FormatSize(req.Size), FormatSize(p.pageSize),
			formatMiB(int64(len(p.free))*p.pageSize), formatMiB(p.total*p.pageSize), hw.ErrNoHugepages)
	}
	top := int64(len(p.free)) - 1
	first := p.free[top] // lowest free index is on top
	var more []int32
	if pages > 1 {
		more = slices.Clone(p.free[top-pages+1 : top])
		slices.Reverse(more)
	}
	p.free = p.free[:top-pages+1]
	// A region within one page is contiguous whether or not it was asked
	// to be; one spanning pages is contiguous only if the pages happen
	// to be adjacent, which a caller may not rely on (DPDK does not
	// promise it without RTE_MEMZONE_IOVA_CONTIG), so it is reported as
	// not contiguous.
	r := &hw.Region{
		Node:       p.node,
		Size:       req.Size,
		PageSize:   p.pageSize,
		Pages:      pages,
		Contiguous: pages == 1,
		Owner:      req.Owner,
		IOVA:       p.iova + uint64(first)*uint64(p.pageSize),
		Handle:     m.next,
	}
	m.live[m.next] = &live{region: r, pool: p, first: first, more: more}
	m.next++
	p.stats.Allocs++
	p.stats.LiveRegions++
	p.stats.FreePages -= pages
	p.stats.InUsePages += pages
	p.stats.InUseBytes += req.Size
	p.stats.PeakInUsePages = max(p.stats.PeakInUsePages, p.stats.InUsePages)
	return r, nil
}

// Free returns a region's pages to their node's pool. Freeing nil, a
// region twice (ErrDoubleFree) or a region this Memory did not hand out
// (ErrForeignRegion) is an error and is counted.
func (m *Memory) Free(r *hw.Region) error {
	if r == nil {
		m.stats.BadFrees++
		return fmt.Errorf("free of a nil region: %w", ErrForeignRegion)
	}
	if r.Handle&freedBit != 0 {
		m.stats.DoubleFrees++
		return fmt.Errorf("node %d: region of %s owned by %q: %w", r.Node, FormatSize(r.Size), r.Owner, ErrDoubleFree)
	}
	l, ok := m.live[r.Handle]
	if !ok || l.region != r {
		m.stats.BadFrees++
		return fmt.Errorf("node %d: region of %s owned by %q (handle %d): %w", r.Node, FormatSize(r.Size), r.Owner, r.Handle, ErrForeignRegion)
	}
	delete(m.live, r.Handle)
	r.Handle |= freedBit
	p := l.pool
	// Push back highest first so the lowest index is on top again.
	for _, pg := range slices.Backward(l.more) {
		p.free = append(p.free, pg)
	}
	p.free = append(p.free, l.first)
	n := int64(1 + len(l.more))
	p.stats.Frees++
	p.stats.LiveRegions--
	p.stats.FreePages += n
	p.stats.InUsePages -= n
	p.stats.InUseBytes -= l.region.Size
	return nil
}

// PoolStats counts one node's pages of one size.
type PoolStats struct {
	PageSize       int64 `json:"page_size"`
	TotalPages     int64 `json:"total_pages"`
	FreePages      int64 `json:"free_pages"`
	InUsePages     int64 `json:"in_use_pages"`
	PeakInUsePages int64 `json:"peak_in_use_pages"`
	// InUseBytes is what the live regions asked for; the rest of their
	// pages is lost to rounding up to whole pages.
	InUseBytes  int64 `json:"in_use_bytes"`
	LiveRegions int64 `json:"live_regions"`
	Allocs      int64 `json:"allocs"`
	Frees       int64 `json:"frees"`
	// Failed counts allocations refused for lack of free pages.
	Failed int64 `json:"failed"`
	// RefusedContiguous counts contiguous requests larger than a page.
	RefusedContiguous int64 `json:"refused_contiguous"`
}

// NodeStats is one node's hugepage accounting.
type NodeStats struct {
	Node    int       `json:"node"`
	Pages2M PoolStats `json:"pages_2m"`
	Pages1G PoolStats `json:"pages_1g"`
}

// MemoryStats is the whole machine's hugepage accounting.
type MemoryStats struct {
	Nodes []NodeStats `json:"nodes"`
	// BadRequests counts malformed Alloc requests (unknown node, bad
	// size or page size).
	BadRequests int64 `json:"bad_requests"`
	// DoubleFrees and BadFrees count refused Free calls.
	DoubleFrees int64 `json:"double_frees"`
	BadFrees    int64 `json:"bad_frees"`
}

// Stats returns the accounting, nodes in id order.
func (m *Memory) Stats() MemoryStats {
	s := m.stats
	s.Nodes = make([]NodeStats, len(m.pools))
	for i, p := range m.pools {
		s.Nodes[i] = NodeStats{Node: p[0].node, Pages2M: p[0].stats, Pages1G: p[1].stats}
	}
	return s
}

// ResetStats starts a new measurement window, as the end of a warm-up
// does. The rule: counters (allocations, frees, allocations failed for
// lack of pages, contiguous requests refused, bad requests, double and
// bad frees) go to zero; gauges (what is held now: pages in use and
// free, the bytes and regions live, the page size and pool size) keep
// their value, since the regions are still held and their frees will
// subtract from them; the peak of pages in use restarts from the pages
// in use now, so that it is the peak of the new window.
func (m *Memory) ResetStats() {
	m.stats = MemoryStats{}
	for _, p := range m.pools {
		for _, pl := range p {
			st := pl.stats
			pl.stats = PoolStats{
				PageSize: st.PageSize, TotalPages: st.TotalPages, FreePages: st.FreePages,
				InUsePages: st.InUsePages, PeakInUsePages: st.InUsePages,
				InUseBytes: st.InUseBytes, LiveRegions: st.LiveRegions,
			}
		}
	}
}

// NodeStats returns one node's accounting.
func (m *Memory) NodeStats(node int) (NodeStats, bool) {
	i := m.topo.nodeIndex(node)
	if i < 0 {
		return NodeStats{}, false
	}
	return NodeStats{Node: node, Pages2M: m.pools[i][0].stats, Pages1G: m.pools[i][1].stats}, true
}

// LiveRegion describes a region not yet freed, for leak reports.
type LiveRegion struct {
	Node     int    `json:"node"`
	Owner    string `json:"owner"`
	Size     int64  `json:"size"`
	PageSize int64  `json:"page_size"`
	Pages    int64  `json:"pages"`
	IOVA     uint64 `json:"iova"`
}

// Live returns the regions not yet freed, in allocation order.
func (m *Memory) Live() []LiveRegion {
	handles := make([]uintptr, 0, len(m.live))
	for h := range m.live {
		handles = append(handles, h)
	}
	slices.Sort(handles)
	out := make([]LiveRegion, len(handles))
	for i, h := range handles {
		r := m.live[h].region
		out[i] = LiveRegion{Node: r.Node, Owner: r.Owner, Size: r.Size, PageSize: r.PageSize, Pages: r.Pages, IOVA: r.IOVA}
	}
	return out
}

// OwnerUsage is the hugepage memory one owner holds.
type OwnerUsage struct {
	Owner   string `json:"owner"`
	Regions int64  `json:"regions"`
	Bytes   int64  `json:"bytes"`
	Pages   int64  `json:"pages"`
}

// ByOwner sums the live regions per owner, sorted by owner.
func (m *Memory) ByOwner() []OwnerUsage {
	var out []OwnerUsage
	for _, r := range m.Live() {
		i, found := slices.BinarySearchFunc(out, r.Owner, func(u OwnerUsage, o string) int {
			switch {
			case u.Owner < o:
				return -1
			case u.Owner > o:
				return 1
			}
			return 0
		})
		if !found {
			out = slices.Insert(out, i, OwnerUsage{Owner: r.Owner})
		}
		out[i].Regions++
		out[i].Bytes += r.Size
		out[i].Pages += r.Pages
	}
	return out
}
