package ringdev

import (
	"runtime"
	"syscall"
)

// dataRooms returns n bytes for a pool's data rooms: an anonymous private
// mapping outside the Go heap, as DPDK's mempools live in a memzone of
// their own. The garbage collector neither scans it nor counts it when it
// paces itself (a pool of tens of thousands of mbufs would otherwise
// double the heap goal), and pages the pool never hands out are never
// touched, so they cost no resident memory. release unmaps it once the
// pool is unreachable; it falls back to the Go heap when mmap fails.
func dataRooms(n int) (mem []byte, release func()) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), func() {}
	}
	return b, func() { _ = syscall.Munmap(b) }
}

// unmapWhenUnreachable releases p's data rooms once nothing refers to the
// pool any more (an mbuf refers to its pool, so none is in use then).
func unmapWhenUnreachable(p *Mempool, release func()) {
	runtime.AddCleanup(p, func(f func()) { f() }, release)
}
