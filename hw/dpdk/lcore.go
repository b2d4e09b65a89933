//go:build dpdk

package dpdk

/*
#include "sv_dpdk.h"
*/
import "C"

import (
	"fmt"
	"runtime"
)

// LcoreIDAny is rte_lcore_id() of a thread the EAL does not know
// (LCORE_ID_ANY).
const LcoreIDAny = int(^uint32(0))

// RegisterThread locks the calling goroutine to its OS thread and
// registers the thread with the EAL (rte_thread_register), so that it has
// an lcore id: mempool per-lcore caches then serve it, and DPDK's
// per-lcore statistics count it. The real-time driver's lcore goroutines
// call it first thing; each must call UnregisterThread before it returns.
// It returns the lcore id given.
func (e *EAL) RegisterThread() (int, error) {
	runtime.LockOSThread()
	rc := C.sv_thread_register()
	if rc < 0 {
		runtime.UnlockOSThread()
		return LcoreIDAny, fmt.Errorf("dpdk: rte_thread_register: %w (all RTE_MAX_LCORE lcore ids taken?)", errnoErr(rc))
	}
	return int(rc), nil
}

// UnregisterThread releases the calling thread's lcore id
// (rte_thread_unregister) and unlocks the goroutine from the thread.
func (e *EAL) UnregisterThread() {
	C.rte_thread_unregister()
	runtime.UnlockOSThread()
}

// LcoreID returns the calling thread's lcore id (rte_lcore_id), or
// LcoreIDAny for a thread that is not registered. The answer is only
// meaningful on a goroutine locked to its thread.
func (e *EAL) LcoreID() int { return int(C.sv_lcore_id()) }

// ThreadHook registers the calling thread with the EAL and returns the
// function that unregisters it: the shape of stack/rt's
// Config.ThreadHook, which runs it on each lcore goroutine's OS thread
// before the poll loop, so that the real-time driver's lcores are EAL
// threads (rte_thread_register) and mempool per-lcore caches serve them.
// The lcore argument is the driver's lcore index; the EAL gives its own
// lcore id, which LcoreID reports on that thread.
func (e *EAL) ThreadHook(lcore int) (func(), error) {
	if _, err := e.RegisterThread(); err != nil {
		return nil, fmt.Errorf("lcore %d: %w", lcore, err)
	}
	return e.UnregisterThread, nil
}
