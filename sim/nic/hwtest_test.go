package nic_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/hwtest"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
)

// The shared hw.EthDev conformance specs (hw/hwtest) on two simulated
// NICs joined by a link: the same spec text hw/dpdk runs on a net_memif
// pair and hw/ringdev on its ring pair.
var _ = Describe("the simulated NIC against the shared hw contracts", func() {
	hwtest.EthDevSpecs(func() *hwtest.EthPair {
		eng := sim.NewEngine(1)
		mem := newTestMem(1<<16, 1)
		port := func(id uint16, name string) (*nic.Port, *nic.Mempool) {
			p, err := nic.NewPort(eng, id, nic.PortConfig{Name: name, Model: "hi1822-25g"})
			must(err)
			must(p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1, TxOffloads: hw.TxOffloadMultiSegs}))
			pool, err := nic.NewMempool(name+"-pool", 4096, nic.DefaultMbufSize, 0, mem)
			must(err)
			must(p.SetupRxQueue(0, 1024, pool))
			must(p.SetupTxQueue(0, 1024))
			must(p.Start())
			return p, pool
		}
		a, pa := port(0, "a")
		b, pb := port(1, "b")
		_, err := nic.NewLink(eng, "ab", a, b, nic.LinkConfig{})
		must(err)
		made := 0
		return &hwtest.EthPair{
			A: a, B: b, PoolA: pa, PoolB: pb,
			NewPool: func(name string, n int) hw.Mempool {
				made++
				p, err := nic.NewMempool(fmt.Sprintf("%s-%d", name, made), n, nic.DefaultMbufSize, 0, mem)
				must(err)
				return p
			},
			// Virtual time: run the engine until nothing is pending (the
			// link delivers), then reclaim the tx descriptors whose frames
			// left, as rte_eth_tx_done_cleanup does.
			Advance: func() {
				eng.Run()
				a.TxDoneCleanup(0)
				b.TxDoneCleanup(0)
			},
			Caps: hwtest.EthCaps{Chains: true},
		}
	})
})
