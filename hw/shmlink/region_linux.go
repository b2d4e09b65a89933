//go:build linux

package shmlink

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// region is the mapped file and this side's lock on it.
type region struct {
	f       *os.File
	mem     []byte
	lay     layout
	side    int
	path    string
	creator bool
}

// Futex operations (linux/futex.h); the shared forms, without
// FUTEX_PRIVATE_FLAG, since the word is in a mapping two processes share.
const (
	futexWait = 0
	futexWake = 1
)

// wakeWord wakes every waiter on w, in any process.
func wakeWord(w *atomic.Uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWake, math.MaxInt32, 0, 0, 0)
}

// waitWord sleeps while *w == val, for d at most (or until a wake or a
// signal).
func waitWord(w *atomic.Uint32, val uint32, d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWait, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// lockByte takes this side's lock (an open file description lock on
// byte side), held until the file is closed or the process ends.
func lockByte(f *os.File, side int) error {
	l := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: int64(side), Len: 1}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &l)
}

// held reports whether some other open file description holds byte
// side's lock: whether that side's process is alive and attached.
func held(f *os.File, side int) bool {
	l := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: int64(side), Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &l); err != nil {
		return false
	}
	return l.Type != unix.F_UNLCK
}

// openRegion creates or attaches to c's region.
func openRegion(c Config) (*region, error) {
	if c.Role == RoleCreate {
		return createRegion(c)
	}
	deadline := time.Now().Add(c.Wait)
	for {
		r, retry, err := attachRegion(c)
		if err == nil || !retry || !time.Now().Before(deadline) {
			return r, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createRegion(c Config) (*region, error) {
	mtu, slots := c.MTU, c.Slots
	if mtu == 0 {
		mtu = 1500
	}
	if slots == 0 {
		slots = DefaultSlots
	}
	lay := newLayout(mtu, slots)
	if old, err := os.OpenFile(c.Path, os.O_RDWR, 0); err == nil {
		live := held(old, 0)
		_ = old.Close()
		if live {
			return nil, fmt.Errorf("shmlink create %s: a running creator holds it", c.Path)
		}
		// A region left by a creator that is gone: an attacher still
		// mapping it keeps the old file, sees its creator gone, and
		// must attach again.
		if err := os.Remove(c.Path); err != nil {
			return nil, fmt.Errorf("shmlink create %s: removing the stale region: %w", c.Path, err)
		}
	}
	f, err := os.OpenFile(c.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shmlink create: %w", err)
	}
	fail := func(err error) (*region, error) {
		_ = f.Close()
		_ = os.Remove(c.Path)
		return nil, fmt.Errorf("shmlink create %s: %w", c.Path, err)
	}
	if err := lockByte(f, 0); err != nil {
		return fail(fmt.Errorf("lock: %w", err))
	}
	if err := f.Truncate(int64(lay.size)); err != nil {
		return fail(err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, lay.size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(fmt.Errorf("mmap %d bytes: %w", lay.size, err))
	}
	lay.put(mem)
	word(mem, offSide).Store(0)
	word(mem, offSide+4).Store(uint32(os.Getpid()))
	word(mem, offReady).Store(1)
	return &region{f: f, mem: mem, lay: lay, side: 0, path: c.Path, creator: true}, nil
}

// attachRegion maps the creator's region; retry says whether waiting
// may help (not there yet, not ready, its creator gone and perhaps
// about to replace it).
func attachRegion(c Config) (r *region, retry bool, err error) {
	f, err := os.OpenFile(c.Path, os.O_RDWR, 0)
	if err != nil {
		return nil, errors.Is(err, os.ErrNotExist), fmt.Errorf("shmlink attach: %w (start the creating side first)", err)
	}
	fail := func(retry bool, err error) (*region, bool, error) {
		_ = f.Close()
		return nil, retry, fmt.Errorf("shmlink attach %s: %w", c.Path, err)
	}
	st, err := f.Stat()
	if err != nil {
		return fail(false, err)
	}
	if st.Size() < headerSize {
		return fail(true, fmt.Errorf("%d bytes: not a whole region yet", st.Size()))
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(false, fmt.Errorf("mmap: %w", err))
	}
	unmapFail := func(retry bool, err error) (*region, bool, error) {
		_ = unix.Munmap(mem)
		return fail(retry, err)
	}
	if word(mem, offReady).Load() != 1 {
		return unmapFail(true, fmt.Errorf("the creator has not finished the header"))
	}
	lay, err := readLayout(mem, st.Size())
	if err != nil {
		return unmapFail(false, err)
	}
	if !held(f, 0) {
		return unmapFail(true, fmt.Errorf("stale region: its creator is gone"))
	}
	if c.MTU != 0 && c.MTU != lay.mtu {
		return unmapFail(false, fmt.Errorf("the creator's MTU is %d, this side's %d: give both the same --mtu", lay.mtu, c.MTU))
	}
	if c.Slots != 0 && c.Slots != lay.slots {
		return unmapFail(false, fmt.Errorf("the creator's rings have %d slots, this side asks for %d", lay.slots, c.Slots))
	}
	if err := lockByte(f, 1); err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return unmapFail(false, fmt.Errorf("another process is attached"))
		}
		return unmapFail(false, fmt.Errorf("lock: %w", err))
	}
	word(mem, offSide+sideStride).Store(0)
	word(mem, offSide+sideStride+4).Store(uint32(os.Getpid()))
	return &region{f: f, mem: mem, lay: lay, side: 1, path: c.Path}, false, nil
}

// peerAlive reports whether the other side holds its lock.
func (r *region) peerAlive() bool { return held(r.f, 1-r.side) }

// close unmaps the region and drops the lock; the creator removes the
// file (an attacher still mapping it keeps it until it closes).
func (r *region) close() {
	_ = unix.Munmap(r.mem)
	if r.creator {
		_ = os.Remove(r.path)
	}
	_ = r.f.Close()
}
