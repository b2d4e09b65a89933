package ringdev_test

import (
	"fmt"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/hwtest"
	"github.com/savanna-sim/savanna/hw/ringdev"
)

// The shared hw.EthDev conformance specs (hw/hwtest) on a ring port
// pair: the same spec text the simulated NIC and DPDK's net_memif run.
var _ = Describe("the ring port pair against the shared hw contracts", func() {
	hwtest.EthDevSpecs(func() *hwtest.EthPair {
		a, b, err := ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b"})
		Expect(err).NotTo(HaveOccurred())
		pool := func(name string, n int) *ringdev.Mempool {
			p, err := ringdev.NewMempool(name, n, 2048+hw.DefaultHeadroom)
			Expect(err).NotTo(HaveOccurred())
			return p
		}
		pa, pb := pool("a", 4096), pool("b", 4096)
		for _, x := range []struct {
			port *ringdev.Port
			pool hw.Mempool
		}{{a, pa}, {b, pb}} {
			Expect(x.port.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})).To(Succeed())
			Expect(x.port.SetupRxQueue(0, 1024, x.pool)).To(Succeed())
			Expect(x.port.SetupTxQueue(0, 1024)).To(Succeed())
			Expect(x.port.Start()).To(Succeed())
		}
		made := 0
		return &hwtest.EthPair{
			A: a, B: b, PoolA: pa, PoolB: pb,
			NewPool: func(name string, n int) hw.Mempool {
				made++
				return pool(fmt.Sprintf("%s-%d", name, made), n)
			},
			// Real time, in memory: a frame is in the peer's ring when
			// TxBurst returns, so there is nothing to wait for.
			Advance: runtime.Gosched,
			// Mbuf pointers pass through the rings, chains included.
			Caps: hwtest.EthCaps{ZeroCopy: true, Chains: true},
		}
	})
})
