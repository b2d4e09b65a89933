package shmlink_test

import (
	"fmt"
	"path/filepath"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/hwtest"
	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/hw/shmlink"
)

// newPool is a thread-safe pool for a link's rx queue.
func newPool(name string, n int) *ringdev.Mempool {
	p, err := ringdev.NewMempool(name, n, 2048+hw.DefaultHeadroom)
	Expect(err).NotTo(HaveOccurred())
	return p
}

// startPort configures, sets up and starts one side.
func startPort(p *shmlink.Port, pool hw.Mempool) {
	Expect(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: hw.TxOffloadMultiSegs})).To(Succeed())
	Expect(p.SetupRxQueue(0, 1024, pool)).To(Succeed())
	Expect(p.SetupTxQueue(0, 1024)).To(Succeed())
	Expect(p.Start()).To(Succeed())
}

// openPair creates a region in a temporary folder and attaches to it
// from the same process (two mappings of one file, as two processes
// have), closing both at the spec's end.
func openPair(c shmlink.Config) (a, b *shmlink.Port, path string) {
	path = filepath.Join(GinkgoT().TempDir(), "link")
	ca, cb := c, c
	ca.Path, ca.Role = path, shmlink.RoleCreate
	cb.Path, cb.Role = path, shmlink.RoleAttach
	a, err := shmlink.Open(ca)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(a.Close)
	b, err = shmlink.Open(cb)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(b.Close)
	return a, b, path
}

// The shared hw.EthDev conformance specs (hw/hwtest) on both ends of
// one link in one process: the spec text the ring pair, the simulated
// NIC and DPDK's net_memif run.
var _ = Describe("the shared-memory link against the shared hw contracts", func() {
	hwtest.EthDevSpecs(func() *hwtest.EthPair {
		a, b, _ := openPair(shmlink.Config{})
		pa, pb := newPool("a", 4096), newPool("b", 4096)
		startPort(a, pa)
		startPort(b, pb)
		made := 0
		return &hwtest.EthPair{
			A: a, B: b, PoolA: pa, PoolB: pb,
			NewPool: func(name string, n int) hw.Mempool {
				made++
				return newPool(fmt.Sprintf("%s-%d", name, made), n)
			},
			// A frame is in the peer's ring when TxBurst returns.
			Advance: runtime.Gosched,
			// The receiver gets a copy in its own pool's mbuf; chains
			// are gathered into one slot.
			Caps: hwtest.EthCaps{ZeroCopy: false, Chains: true},
		}
	})
})
