package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/hw/shmlink"
	"github.com/savanna-sim/savanna/hw/tap"
)

// serveBackend is the port serve runs the stack on, whichever backend
// gave it: the wiring below it (stack/rt, the apps) is the same code.
type serveBackend struct {
	dev  hw.EthDev
	pool hw.Mempool
	// hook registers each lcore thread with the backend's runtime (the
	// EAL for dpdk), or is nil.
	hook func(lcore int) (func(), error)
	// what names the port in the ready line, e.g. "tap sv0".
	what string
	// notifies is true when the device wakes parked lcores on arrival
	// (the TAP's fd watcher); a DPDK port does not, so its lcores park
	// only briefly (maxParkDPDK) unless --busy.
	notifies bool
	close    func()
}

// serveOpts are the flags that choose and shape the backend.
type serveOpts struct {
	backend  string
	tapName  string
	mac      string
	mtu      int
	cores    int
	eal      string
	dpdkPort string
	// shmPath and shmRole are --shm and --shm-role: the shared-memory
	// link's file and this process's side of it.
	shmPath string
	shmRole string
	rxLoss  float64
	rxReord float64
	seed    uint64
}

// serveBackends lists --backend's values. "sim" is named so that the
// refusal can say where the simulation runs.
const serveBackends = "tap, dpdk or shm"

// shmAttachWait is how long --shm-role attach waits for the creating
// serve's region, so that the two may be started in either order.
const shmAttachWait = 10 * time.Second

// openServeBackend opens the port and its pool. The dpdk backend goes
// through hw/dpdk's API, which the build without -tags dpdk also has
// (answering dpdk.ErrNotBuilt), so this file needs no build tag and the
// untagged build no cgo.
func openServeBackend(o serveOpts) (*serveBackend, error) {
	room := hw.DefaultHeadroom + o.mtu + 14 + 64
	size := 8192 * max(1, o.cores)
	switch o.backend {
	case "tap":
		dev, err := tap.Open(tap.Config{Name: o.tapName, MAC: o.mac, MTU: o.mtu, Up: true,
			RxLoss: o.rxLoss, RxReorder: o.rxReord, Seed: o.seed})
		if err != nil {
			return nil, err
		}
		pool, err := ringdev.NewMempool("serve.pool", size, room)
		if err != nil {
			_ = dev.Close()
			return nil, err
		}
		return &serveBackend{dev: dev, pool: pool, what: "tap " + o.tapName, notifies: true,
			close: func() { _ = dev.Close() }}, nil
	case "dpdk":
		eal, err := dpdk.Init(dpdk.Config{Args: strings.Fields(o.eal), ProgramName: "simrun"})
		if err != nil {
			return nil, err
		}
		// A per-lcore cache of 256 mbufs: the lcores are EAL threads
		// (the hook), so gets and puts on them stay off the shared ring.
		dev, pool, err := eal.PortWithPool(o.dpdkPort, dpdk.MempoolConfig{Name: "serve_pool",
			Size: size, Cache: 256, DataRoom: room})
		if err != nil {
			_ = eal.Close()
			return nil, err
		}
		return &serveBackend{dev: dev, pool: pool, hook: eal.ThreadHook,
			what: "dpdk port " + dpdk.PortName(dev),
			close: func() {
				// Close the port (net_tap removes its interface) before the
				// EAL: rte_eal_cleanup of 22.11 does not close devices.
				if c, ok := dev.(interface{ Close() error }); ok {
					_ = c.Close()
				}
				_ = eal.Close()
			}}, nil
	case "shm":
		dev, err := shmlink.Open(shmlink.Config{Path: o.shmPath, Role: shmlink.Role(o.shmRole), MTU: o.mtu,
			MAC: o.mac, Wait: shmAttachWait})
		if err != nil {
			return nil, err
		}
		pool, err := ringdev.NewMempool("serve.pool", size, room)
		if err != nil {
			_ = dev.Close()
			return nil, err
		}
		return &serveBackend{dev: dev, pool: pool, what: fmt.Sprintf("shm link %s (%s)", o.shmPath, o.shmRole),
			notifies: true, close: func() { _ = dev.Close() }}, nil
	case "sim":
		return nil, fmt.Errorf("--backend sim: serve runs in real time against real peers; the simulated NIC runs in virtual time under simrun run (want %s)", serveBackends)
	}
	return nil, fmt.Errorf("--backend %q: want %s", o.backend, serveBackends)
}
