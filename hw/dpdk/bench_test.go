//go:build dpdk

package dpdk_test

import (
	"fmt"
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
)

// benchPort opens a net_ring loopback port made for benchmarks; the
// vdev is net_ring0, shared with the specs, so it is configured afresh.
func benchPort(b *testing.B, pool string) (*dpdk.EthDev, *dpdk.Mempool) {
	b.Helper()
	p, err := eal.OpenPort("net_ring0")
	if err != nil {
		b.Fatal(err)
	}
	_ = p.Stop()
	mp, err := eal.NewMempool(dpdk.MempoolConfig{Name: pool, Size: 4096, Cache: 256, DataRoom: 2048 + hw.DefaultHeadroom, Socket: p.Socket()})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1}); err != nil {
		b.Fatal(err)
	}
	if err := p.SetupRxQueue(0, 1024, mp); err != nil {
		b.Fatal(err)
	}
	if err := p.SetupTxQueue(0, 1024); err != nil {
		b.Fatal(err)
	}
	if err := p.Start(); err != nil {
		b.Fatal(err)
	}
	return p, mp
}

// BenchmarkLoopback measures one packet's trip through TxBurst and
// RxBurst on a net_ring loopback port, bursts of 32, mbufs from the pool
// and freed again: the cost of the Go/C boundary per packet.
func BenchmarkLoopback(b *testing.B) {
	port, pool := benchPort(b, "bench_loop")
	for _, size := range []int{64, 1500} {
		b.Run(fmt.Sprintf("frame=%d", size), func(b *testing.B) {
			tx := make([]*hw.Mbuf, 32)
			rx := make([]*hw.Mbuf, 32)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			b.ResetTimer()
			for n := 0; n < b.N; n += len(tx) {
				if !pool.GetBulk(tx) {
					b.Fatal("pool empty")
				}
				for _, m := range tx {
					if _, err := m.Append(size); err != nil {
						b.Fatal(err)
					}
				}
				sent := port.TxBurst(0, tx)
				for _, m := range tx[sent:] {
					m.Free()
				}
				for got := 0; got < sent; {
					k := port.RxBurst(0, rx)
					for _, m := range rx[:k] {
						m.Free()
					}
					got += k
				}
			}
		})
	}
}

// BenchmarkMempoolGetFree measures one Get and Free (two crossings).
func BenchmarkMempoolGetFree(b *testing.B) {
	pool, err := eal.NewMempool(dpdk.MempoolConfig{Name: "bench_getfree", Size: 1024, DataRoom: 2048 + hw.DefaultHeadroom, Socket: dpdk.AnySocket})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		pool.Get().Free()
	}
}

// BenchmarkCompress measures one stateless 64 KiB deflate operation on
// each software compressdev, copies into and out of mbufs included.
func BenchmarkCompress(b *testing.B) {
	src := corpus(64<<10, 5)
	for _, name := range []string{"compress_zlib", "compress_isal"} {
		dev, err := eal.OpenCompressDev(name, dpdk.CompressConfig{Depth: 8, Mbufs: 64, Socket: dpdk.AnySocket})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: make([]byte, len(src)+1024),
				Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 1}}
			ops := []*hw.CompOp{op}
			b.ReportAllocs()
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if dev.EnqueueBurst(0, ops) != 1 {
					b.Fatal("refused")
				}
				for dev.DequeueBurst(0, ops) == 0 {
				}
				if op.Status != hw.StatusSuccess {
					b.Fatal(op.Debug)
				}
			}
			b.ReportMetric(float64(len(src))/float64(op.Produced), "ratio")
		})
		if err := dev.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
