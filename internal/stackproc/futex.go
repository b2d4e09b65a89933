package stackproc

import (
	"math"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futexWake wakes every thread of any process waiting on w (futex(2)
// FUTEX_WAKE without FUTEX_PRIVATE_FLAG: the word is in a shared mapping,
// so the kernel keys waiters by the memfd's page, not by the address).
func futexWake(w *atomic.Uint32) {
	_, _, _ = unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, math.MaxInt32, 0, 0, 0)
}

// bump tells the app that ev's object changed: bump the word, and wake
// the futex only when a thread waits (the app counts waiters before it
// rechecks, so a change is never missed: both sides' atomics are
// sequentially consistent).
func bump(ev, waiters *atomic.Uint32) {
	ev.Add(1)
	if waiters.Load() != 0 {
		futexWake(ev)
	}
}

// futexWakeOp is FUTEX_WAKE (linux/futex.h), which x/sys/unix does not
// name.
const futexWakeOp = 1
