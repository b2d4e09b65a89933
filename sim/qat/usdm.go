package qat

import (
	"fmt"

	"github.com/savanna-sim/savanna/hw"
)

// usdmPageSize is the size of USDM's pages: 2 MiB hugepages, from which
// qaeMemAllocNUMA carves physically contiguous buffers.
const usdmPageSize = int(hw.Hugepage2M)

// kernelPage is the size of the pages the kernel's buddy allocator and
// compaction work in.
const kernelPage = 4096

// usdmPool is USDM's hugepage accounting on one node.
type usdmPool struct {
	node        int
	cfg         USDMConfig
	pagesInUse  int
	peakPages   int
	allocs      uint64
	frees       uint64
	failures    uint64
	leakedPages uint64
	// leakedBuffers and leakedBytes are pinned buffers (USDM or legacy
	// kernel memory) processes held at exit.
	leakedBuffers uint64
	leakedBytes   uint64
}

// usdmPage is one hugepage a process took from USDM.
type usdmPage struct {
	region *hw.Region
	node   int
	used   int // bytes handed out from its start (bump allocation)
	live   int // buffers still allocated from it
	iova   uint64
	mem    []byte // the page's bytes
}

// pinned is the driver's record of a pinned buffer.
type pinned struct {
	buf  *hw.PinnedBuffer
	pid  hw.ProcessID
	size int
	node int
	page *usdmPage // nil: a kernel contiguous allocation (legacy driver)
}

func (s *Service) pool(node int) *usdmPool {
	p := s.pools[node]
	if p == nil {
		p = &usdmPool{node: node, cfg: USDMConfig{}.withDefaults()}
		s.pools[node] = p
	}
	return p
}

// AllocPinned implements hw.CompressService. With a USDM driver the
// buffer is carved from one of the process's 2 MiB hugepages on node,
// taking a new page from the pool when none has room (an ioctl and an
// mmap); the pool's max_huge_pages and max_huge_pages_per_process limit
// it. With the legacy driver it is physically contiguous memory asked
// from the kernel with an ioctl, paid for in page allocation and memory
// compaction (see legacy.go). node < 0 means the node of the process's
// instance.
func (s *Service) AllocPinned(pid hw.ProcessID, size int, node int) (*hw.PinnedBuffer, error) {
	p := s.proc(pid)
	if node < 0 {
		node = 0
		if len(p.insts) > 0 {
			node = p.insts[0].dev.node
		} else if len(s.devices) > 0 {
			node = s.devices[0].node
		}
	}
	d := s.deviceFor(p, node)
	fail := func(err error) (*hw.PinnedBuffer, error) {
		p.stats.AllocFailures++
		s.counters.PinnedAllocFailures++
		s.pool(node).failures++
		return nil, fmt.Errorf("qat: process %d: pinned buffer of %d bytes on node %d: %w", pid, size, node, err)
	}
	switch {
	case d == nil:
		return fail(fmt.Errorf("%w: %w", errNoDevice, hw.ErrNoPinnedMemory))
	case size <= 0:
		return fail(fmt.Errorf("size must be positive: %w", hw.ErrNoPinnedMemory))
	case size > usdmPageSize:
		return fail(fmt.Errorf("larger than one 2 MiB hugepage, USDM cannot make it contiguous: %w", hw.ErrNoPinnedMemory))
	case d.faults.usdmExhausted:
		return fail(fmt.Errorf("%s: usdm_exhaustion fault injected: %w", d.name, hw.ErrNoPinnedMemory))
	}
	b := &pinned{pid: pid, size: size, node: node}
	var iova uint64
	var mem []byte
	if d.pattern.ContiguousFromKernel {
		iova = s.allocLegacy(p, d, size, node)
		mem = make([]byte, size)
	} else {
		pg, err := s.usdmPageFor(p, d, size, node)
		if err != nil {
			return fail(err)
		}
		b.page = pg
		iova = pg.iova + uint64(pg.used)
		// The buffer is a view of the page, as a USDM buffer is of its
		// hugepage: not zeroed on reuse.
		mem = pg.mem[pg.used : pg.used+size : pg.used+size]
		pg.used = min(usdmPageSize, pg.used+(size+63)&^63) // USDM aligns buffers to cache lines
		pg.live++
		s.charge(p, hw.CostUSDMAlloc, 1)
	}
	s.handle++
	b.buf = &hw.PinnedBuffer{Bytes: mem, Node: node, IOVA: iova, Owner: pid, Handle: s.handle}
	s.bufs[s.handle] = b
	p.bufs[s.handle] = b
	p.stats.Buffers++
	p.stats.BufferBytes += uint64(size)
	s.counters.PinnedAllocs++
	return b.buf, nil
}

// usdmPageFor finds room for size bytes in p's pages on node, or takes a
// new page within the limits.
func (s *Service) usdmPageFor(p *process, d *Device, size, node int) (*usdmPage, error) {
	for _, pg := range p.pages[node] {
		if usdmPageSize-pg.used >= size {
			return pg, nil
		}
	}
	pool := s.pool(node)
	if pool.pagesInUse >= pool.cfg.MaxHugePages {
		return nil, fmt.Errorf("USDM pool of node %d has all %d pages in use (max_huge_pages): %w",
			node, pool.cfg.MaxHugePages, hw.ErrNoPinnedMemory)
	}
	if n := len(p.pages[node]); n >= pool.cfg.MaxHugePagesPerProcess {
		return nil, fmt.Errorf("process holds %d pages on node %d (max_huge_pages_per_process %d): %w",
			n, node, pool.cfg.MaxHugePagesPerProcess, hw.ErrNoPinnedMemory)
	}
	pg := &usdmPage{node: node, mem: make([]byte, usdmPageSize)}
	if s.mem != nil {
		r, err := s.mem.Alloc(hw.AllocRequest{Node: node, Size: int64(usdmPageSize), PageSize: hw.Hugepage2M,
			Contiguous: true, Owner: fmt.Sprintf("usdm/pid%d", p.pid)})
		if err != nil {
			return nil, fmt.Errorf("hugepage for USDM: %w: %w", err, hw.ErrNoPinnedMemory)
		}
		pg.region, pg.iova = r, r.IOVA
	} else {
		pg.iova = s.iova
		s.iova += uint64(usdmPageSize)
	}
	// usdm_drv maps a new hugepage into the process: an ioctl to get it,
	// an mmap to map it.
	s.syscalls(p, d, sysIoctl, 1)
	s.syscalls(p, d, sysMmap, 1)
	p.pages[node] = append(p.pages[node], pg)
	pool.pagesInUse++
	pool.peakPages = max(pool.peakPages, pool.pagesInUse)
	pool.allocs++
	p.stats.Pages++
	return pg, nil
}

// FreePinned implements hw.CompressService. A hugepage whose buffers are
// all freed is kept for the process's next buffers (one empty page per
// node; more go back to the pool).
func (s *Service) FreePinned(buf *hw.PinnedBuffer) error {
	if buf == nil {
		s.counters.BadFrees++
		return fmt.Errorf("qat: free of a nil pinned buffer")
	}
	b := s.bufs[buf.Handle]
	if b == nil || b.buf != buf {
		s.counters.BadFrees++
		return fmt.Errorf("qat: free of pinned buffer %#x (owner %d): not allocated here or already freed", buf.Handle, buf.Owner)
	}
	p := s.procs[b.pid]
	delete(s.bufs, buf.Handle)
	delete(p.bufs, buf.Handle)
	p.stats.Buffers--
	p.stats.BufferBytes -= uint64(b.size)
	s.counters.PinnedFrees++
	if b.page == nil {
		s.freeLegacy(p, b, true)
		return nil
	}
	b.page.live--
	if b.page.live > 0 {
		return nil
	}
	// An empty page stays with the process for its next buffers, as
	// USDM's slab cache keeps it; a second empty one goes back.
	b.page.used = 0
	pages := p.pages[b.node]
	for _, pg := range pages {
		if pg != b.page && pg.live == 0 {
			s.dropPage(p, b.page)
			break
		}
	}
	return nil
}

// dropPage takes a page out of p's list and releases it.
func (s *Service) dropPage(p *process, pg *usdmPage) {
	pages := p.pages[pg.node]
	for i, x := range pages {
		if x == pg {
			p.pages[pg.node] = append(pages[:i], pages[i+1:]...)
			break
		}
	}
	s.releasePage(p, pg)
}

// releasePage gives a hugepage back to the pool and the host.
func (s *Service) releasePage(p *process, pg *usdmPage) {
	pool := s.pool(pg.node)
	pool.pagesInUse--
	pool.frees++
	p.stats.Pages--
	if s.mem != nil && pg.region != nil {
		if err := s.mem.Free(pg.region); err != nil {
			s.counters.HugepageFreeErrors++
		}
	}
}

// PagesInUse is the number of USDM hugepages in use on node.
func (s *Service) PagesInUse(node int) int { return s.pool(node).pagesInUse }
