package ringdev_test

import (
	"testing"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
)

// BenchmarkPairBurst moves 32-frame bursts from one port to the other and
// back to the pool: the per-packet path must not allocate.
func BenchmarkPairBurst(b *testing.B) {
	a, p, _ := ringdev.NewPair(ringdev.Config{}, ringdev.Config{})
	pool, _ := ringdev.NewMempool("bench", 4096, 2048)
	for _, port := range []*ringdev.Port{a, p} {
		_ = port.Configure(hw.PortConf{RxQueues: 1, TxQueues: 1})
		_ = port.SetupRxQueue(0, 1024, pool)
		_ = port.SetupTxQueue(0, 1024)
		_ = port.Start()
	}
	burst := make([]*hw.Mbuf, 32)
	rx := make([]*hw.Mbuf, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !pool.GetBulk(burst) {
			b.Fatal("pool empty")
		}
		for _, m := range burst {
			m.DataLen, m.PktLen = 60, 60
		}
		a.TxBurst(0, burst)
		n := p.RxBurst(0, rx)
		for _, m := range rx[:n] {
			m.Free()
		}
	}
	b.SetBytes(32 * 60)
}
