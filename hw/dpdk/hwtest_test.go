//go:build dpdk

package dpdk_test

import (
	"fmt"
	"runtime"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
	"github.com/savanna-sim/savanna/hw/hwtest"
)

// The shared conformance specs (hw/hwtest) on DPDK's software devices:
// the same spec text sim/nic, hw/ringdev and sim/qat run, so that a
// difference between the models and the real drivers fails here.
var _ = Describe("DPDK against the shared hw contracts", Label("dpdk"), func() {
	Context("a net_memif pair", func() {
		hwtest.EthDevSpecs(func() *hwtest.EthPair {
			made := 0
			pool := func(name string, n, socket int) *dpdk.Mempool {
				made++
				mp, err := eal.NewMempool(dpdk.MempoolConfig{Name: fmt.Sprintf("%s_%d", name, made), Size: n,
					DataRoom: 2048 + hw.DefaultHeadroom, Socket: socket})
				Expect(err).NotTo(HaveOccurred())
				return mp
			}
			open := func(name string) (*dpdk.EthDev, *dpdk.Mempool) {
				p, err := eal.OpenPort(name)
				Expect(err).NotTo(HaveOccurred())
				mp := pool("hwtest_"+name, 4096, p.Socket())
				conf := hw.PortConf{RxQueues: 1, TxQueues: 1}
				// Chains where the PMD offers them (net_memif does).
				conf.TxOffloads = p.Info().TxOffloadCapa & hw.TxOffloadMultiSegs
				Expect(p.Configure(conf)).To(Succeed())
				Expect(p.SetupRxQueue(0, 1024, mp)).To(Succeed())
				Expect(p.SetupTxQueue(0, 1024)).To(Succeed())
				Expect(p.Start()).To(Succeed())
				return p, mp
			}
			// The memif server starts before the client, and the client
			// polls rx once before the server can send.
			a, pa := open("net_memif4")
			b, pb := open("net_memif5")
			Eventually(func() bool { return a.Link().Up && b.Link().Up }).
				WithTimeout(10 * time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
			burst := make([]*hw.Mbuf, 8)
			Expect(b.RxBurst(0, burst)).To(BeZero())
			Expect(a.RxBurst(0, burst)).To(BeZero())
			return &hwtest.EthPair{
				A: a, B: b, PoolA: pa, PoolB: pb,
				NewPool: func(name string, n int) hw.Mempool { return pool(name, n, dpdk.AnySocket) },
				// Real time: memif copies through shared memory rings,
				// so give the peer's poll a moment.
				Advance: func() { time.Sleep(50 * time.Microsecond) },
				Caps:    hwtest.EthCaps{Chains: a.Info().TxOffloadCapa&hw.TxOffloadMultiSegs != 0},
			}
		})
	})

	for _, name := range []string{"compress_zlib", "compress_isal"} {
		Context(name, func() {
			hwtest.CompressDevSpecs(func() *hwtest.CompressTarget {
				dev, err := eal.OpenCompressDev(name, dpdk.CompressConfig{Depth: 16, Mbufs: 128, Socket: dpdk.AnySocket})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(dev.Close)
				return &hwtest.CompressTarget{Dev: dev, QP: 0, Advance: runtime.Gosched,
					// The backend refuses an empty source to inflate before
					// the PMD sees it: compress_isal 22.11 crashes on one.
					Quirks: hwtest.CompressQuirks{EmptyDecompressInvalid: true}}
			})
		})
	}
})
