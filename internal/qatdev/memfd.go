package qatdev

import (
	"fmt"
	"sort"

	"golang.org/x/sys/unix"
)

// sharedMem is a memfd and the server's mapping of it: the pinned memory
// of one process. The process maps the same descriptor.
type sharedMem struct {
	fd    int
	bytes []byte
	alloc regionAlloc
}

// newSharedMem creates a memfd of size bytes and maps it. A memfd is
// sparse: pages take memory when first written.
func newSharedMem(name string, size int64) (*sharedMem, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create %s: %w", name, err)
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("ftruncate memfd %s to %d: %w", name, size, err)
	}
	b, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("mmap memfd %s: %w", name, err)
	}
	m := &sharedMem{fd: fd, bytes: b}
	m.alloc.init(size)
	return m, nil
}

// close unmaps and closes the memfd (the process's mapping stays valid
// for it until it unmaps or exits).
func (m *sharedMem) close() {
	if m.bytes != nil {
		_ = unix.Munmap(m.bytes)
		m.bytes = nil
	}
	if m.fd >= 0 {
		_ = unix.Close(m.fd)
		m.fd = -1
	}
}

// regionAlloc is a first-fit allocator of cache-line aligned regions in
// [0, size), with free neighbours merged. The model decides whether a
// buffer may be had (USDM's limits, faults) and accounts it; this only
// finds its bytes in the memfd.
type regionAlloc struct {
	size int64
	free []span // sorted by offset, never adjacent
}

type span struct{ off, n int64 }

const regionAlign = 64 // USDM aligns buffers to cache lines

func (a *regionAlloc) init(size int64) {
	a.size = size
	a.free = []span{{0, size}}
}

// get returns the offset of n bytes, or false when no free span fits.
func (a *regionAlloc) get(n int64) (int64, bool) {
	n = (n + regionAlign - 1) &^ (regionAlign - 1)
	for i, s := range a.free {
		if s.n >= n {
			off := s.off
			if s.n == n {
				a.free = append(a.free[:i], a.free[i+1:]...)
			} else {
				a.free[i] = span{s.off + n, s.n - n}
			}
			return off, true
		}
	}
	return 0, false
}

// put returns the region [off, off+n) got from get.
func (a *regionAlloc) put(off, n int64) {
	n = (n + regionAlign - 1) &^ (regionAlign - 1)
	i := sort.Search(len(a.free), func(i int) bool { return a.free[i].off > off })
	a.free = append(a.free, span{})
	copy(a.free[i+1:], a.free[i:])
	a.free[i] = span{off, n}
	if i+1 < len(a.free) && a.free[i].off+a.free[i].n == a.free[i+1].off {
		a.free[i].n += a.free[i+1].n
		a.free = append(a.free[:i+1], a.free[i+2:]...)
	}
	if i > 0 && a.free[i-1].off+a.free[i-1].n == a.free[i].off {
		a.free[i-1].n += a.free[i].n
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
}
