//go:build dpdk

package dpdk

/*
#cgo pkg-config: libdpdk
#cgo CFLAGS: -DALLOW_EXPERIMENTAL_API -Wno-deprecated-declarations
#include "sv_dpdk.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/savanna-sim/savanna/hw"
)

// ErrNotBuilt is returned by the build without the dpdk tag; this build
// never returns it, it exists so that callers compile in both.
var ErrNotBuilt = errors.New("savanna was built without -tags dpdk; rebuild with go build -tags dpdk (needs libdpdk-dev)")

// Available reports whether this build has the DPDK backend.
func Available() bool { return true }

// errnoErr turns a DPDK negative return code or rte_errno into an error.
func errnoErr(rc C.int) error {
	if rc < 0 {
		rc = -rc
	}
	return syscall.Errno(rc)
}

// EAL is the initialised DPDK environment of the process. rte_eal_init
// succeeds once per process (a second call fails with EALREADY, even
// after rte_eal_cleanup), so a program makes one EAL and keeps it.
type EAL struct {
	// pools is the table of mempools made here, indexed by the number
	// written into each mbuf's private area. It is copied on write so
	// that bursts read it without a lock.
	pools atomic.Pointer[[]*Mempool]

	mu      sync.Mutex // serialises control-path calls that change the table
	closed  bool
	cleanup chan chan error // asks the main-lcore goroutine to clean up
	argv    []string
}

// Init runs rte_eal_init with cfg's arguments. It runs on a new goroutine
// locked to its OS thread, which the EAL makes its main lcore and pins to
// that lcore's CPUs (so the pinning does not leak to other goroutines);
// the thread lives until Close.
//
// A vdev that fails to probe does not fail rte_eal_init: callers check
// Ports and CompressDevs for the devices they expect.
func Init(cfg Config) (*EAL, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("dpdk: config: %w", err)
	}
	e := &EAL{cleanup: make(chan chan error), argv: cfg.Argv()}
	empty := []*Mempool{}
	e.pools.Store(&empty)
	res := make(chan error)
	go e.mainLcore(res)
	if err := <-res; err != nil {
		return nil, err
	}
	return e, nil
}

// mainLcore is the goroutine that called rte_eal_init; it stays locked to
// its thread until Close, and the thread exits with it.
func (e *EAL) mainLcore(res chan<- error) {
	runtime.LockOSThread()
	// No UnlockOSThread: the thread carries the EAL's CPU affinity and
	// main-lcore identity, so it ends with the goroutine.
	argv := make([]*C.char, len(e.argv))
	for i, a := range e.argv {
		argv[i] = C.CString(a)
	}
	// The EAL keeps pointers into argv, so the strings are not freed.
	cargv := (**C.char)(C.malloc(C.size_t(len(argv)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	copy(unsafe.Slice(cargv, len(argv)), argv)
	rc := C.sv_eal_init(C.int(len(argv)), cargv)
	if rc < 0 {
		res <- fmt.Errorf("dpdk: rte_eal_init %q: %w", e.argv, errnoErr(rc))
		return
	}
	res <- nil
	done := <-e.cleanup
	if rc := C.rte_eal_cleanup(); rc < 0 {
		done <- fmt.Errorf("dpdk: rte_eal_cleanup: %w", errnoErr(rc))
		return
	}
	done <- nil
}

// Close runs rte_eal_cleanup on the main lcore; close ports and
// compressdevs first. DPDK cannot be initialised again in this process
// afterwards.
func (e *EAL) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	done := make(chan error)
	e.cleanup <- done
	return <-done
}

// SocketID returns the calling thread's NUMA socket (rte_socket_id).
func (e *EAL) SocketID() int { return int(C.sv_socket_id()) }

// Ports returns the names of the ethdev ports the EAL probed, in port-id
// order (RTE_ETH_FOREACH_DEV).
func (e *EAL) Ports() []string {
	var names []string
	for id := C.uint16_t(0); id < C.RTE_MAX_ETHPORTS; id++ {
		if C.rte_eth_dev_is_valid_port(id) == 0 {
			continue
		}
		names = append(names, portName(id))
	}
	return names
}

func portName(id C.uint16_t) string {
	var buf [C.RTE_ETH_NAME_MAX_LEN]C.char
	if C.rte_eth_dev_get_name_by_port(id, &buf[0]) != 0 {
		return fmt.Sprintf("port%d", id)
	}
	return C.GoString(&buf[0])
}

// CompressDevs returns the names of the compressdevs the EAL probed, in
// device-id order.
func (e *EAL) CompressDevs() []string {
	n := int(C.rte_compressdev_count())
	names := make([]string, 0, n)
	for id := 0; id < n; id++ {
		names = append(names, C.GoString(C.rte_compressdev_name_get(C.uint8_t(id))))
	}
	return names
}

// Port opens the ethdev port called name as an hw.EthDev (see OpenPort).
func (e *EAL) Port(name string) (hw.EthDev, error) {
	p, err := e.OpenPort(name)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Mempool makes a pool as an hw.Mempool (see NewMempool).
func (e *EAL) Mempool(cfg MempoolConfig) (hw.Mempool, error) {
	p, err := e.NewMempool(cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// CompressDev opens the compressdev called name as an hw.CompressDev
// (see OpenCompressDev).
func (e *EAL) CompressDev(name string, cfg CompressConfig) (hw.CompressDev, error) {
	d, err := e.OpenCompressDev(name, cfg)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// poolByNo returns the pool numbered no, or nil.
func (e *EAL) poolByNo(no uint32) *Mempool {
	t := *e.pools.Load()
	if int(no) >= len(t) {
		return nil
	}
	return t[no]
}
