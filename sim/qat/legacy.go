package qat

import (
	"github.com/savanna-sim/savanna/sim/cost"
	"math"
)

// The legacy driver (Intel-QAT 2.6.0-60) had no USDM: the zlib shim asked
// the kernel for physically contiguous memory with an ioctl for every
// request. A high-order allocation succeeds only if a run of free 4 KiB
// pages exists; as free memory fragments, the kernel runs memory
// compaction (mm/compaction.c: a migration scanner moves movable pages
// out of a range while a free scanner finds targets for them) until a
// block is free. The seed measured compact_zone at 88% of samples and the
// CPU saturated at ~1k QPS, >90% in the kernel.
//
// The model keeps a fragmentation f in [0, max) per node: the share of
// pages in any candidate range that are in use and must be migrated.
// Building a free run of n pages costs
//
//	migrated = n * f / (1 - f)
//
// pages: the n*f occupied pages of the range, scaled by 1/(1-f) because
// the free scanner must walk that many pages per free target it finds (so
// the cost explodes as free memory runs out of clean blocks, as Mel
// Gorman's compaction measurements show, LWN "Memory compaction", 2010).
// Each allocation charges n x cost.PageAlloc plus migrated x
// cost.CompactionPage plus the ioctl, all kernel time, to the calling
// core. Churn drives f: every free of a contiguous block scatters pages
// (f += Growth*(max-f)); every compaction run restores some order
// (f -= Recovery*f). f therefore rises over a run to the equilibrium
// Growth*max/(Growth+Recovery). USDM allocations never touch this: their
// hugepages were reserved at boot.

// fragState is the fragmentation of one node's free memory.
type fragState struct {
	f              float64
	allocs, frees  uint64
	pagesAllocated uint64
	compacted      uint64
	lastCompacted  uint64
}

func (s *Service) fragOf(node int) *fragState {
	st := s.frag[node]
	if st == nil {
		st = &fragState{f: s.legacy.InitialFragmentation}
		s.frag[node] = st
	}
	return st
}

// Fragmentation is the model's fragmentation of node's free memory, in
// [0, 1).
func (s *Service) Fragmentation(node int) float64 { return s.fragOf(node).f }

// CompactionPages returns the pages a contiguous allocation of size
// bytes would migrate on node now.
func (s *Service) CompactionPages(node, size int) int64 {
	n := (size + kernelPage - 1) / kernelPage
	f := s.fragOf(node).f
	return int64(math.Round(float64(n) * f / (1 - f)))
}

// allocLegacy charges one kernel contiguous allocation and returns its
// IOVA.
func (s *Service) allocLegacy(p *process, d *Device, size, node int) uint64 {
	st := s.fragOf(node)
	pages := (size + kernelPage - 1) / kernelPage
	migrated := s.CompactionPages(node, size)
	s.syscalls(p, d, sysIoctl, 1)
	s.charge(p, cost.PageAlloc, int64(pages))
	s.charge(p, cost.CompactionPage, migrated)
	st.allocs++
	st.pagesAllocated += uint64(pages)
	st.compacted += uint64(migrated)
	st.lastCompacted = uint64(migrated)
	p.stats.CompactedPages += uint64(migrated)
	p.stats.KernelAllocs++
	if migrated > 0 {
		st.f -= s.legacy.Recovery * st.f
	}
	iova := s.iova
	s.iova += uint64(pages * kernelPage)
	return iova
}

// freeLegacy returns a kernel contiguous allocation: an ioctl when the
// process frees it (at exit the kernel reclaims it with the file), and
// more fragmentation either way.
func (s *Service) freeLegacy(p *process, b *pinned, ioctl bool) {
	st := s.fragOf(b.node)
	if ioctl {
		s.syscalls(p, s.deviceFor(p, b.node), sysIoctl, 1)
	}
	st.frees++
	st.f += s.legacy.Growth * (s.legacy.MaxFragmentation - st.f)
}
