package stackproc

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// sharedMem is a process's memfd and the stack's mapping of it, with the
// two eventfd doorbells: toStack (the app rings it after posting a
// request or filling a ring the stack waits on) and toApp (the stack
// rings it for threads blocked in epoll or poll).
type sharedMem struct {
	Mem
	fd, toStack, toApp int
}

// newSharedMem creates and maps a memfd of geometry g, with its header
// written, and the doorbells.
func newSharedMem(name string, g Geometry) (*sharedMem, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("stackproc: memfd_create %s: %w", name, err)
	}
	sm := &sharedMem{fd: fd, toStack: -1, toApp: -1}
	fail := func(what string, err error) (*sharedMem, error) {
		sm.close()
		return nil, fmt.Errorf("stackproc: %s %s: %w", what, name, err)
	}
	if err := unix.Ftruncate(fd, int64(g.size())); err != nil {
		return fail("ftruncate", err)
	}
	b, err := unix.Mmap(fd, 0, g.size(), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail("mmap", err)
	}
	sm.Mem = Mem{b: b, g: g}
	sm.initHeader()
	if sm.toStack, err = unix.Eventfd(0, unix.EFD_CLOEXEC); err != nil {
		return fail("eventfd", err)
	}
	if sm.toApp, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return fail("eventfd", err)
	}
	return sm, nil
}

// close unmaps and closes everything (the process's own mapping stays
// valid for it).
func (sm *sharedMem) close() {
	if sm.b != nil {
		_ = unix.Munmap(sm.b)
		sm.b = nil
	}
	for _, fd := range []*int{&sm.fd, &sm.toStack, &sm.toApp} {
		if *fd >= 0 {
			_ = unix.Close(*fd)
			*fd = -1
		}
	}
}
