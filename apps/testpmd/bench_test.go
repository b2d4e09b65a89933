package testpmd_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/testpmd"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
)

// loopDev is a port whose wire loops back: what TxBurst takes, the next
// RxBurst returns, so a forwarder on it turns the same burst round and
// round and a benchmark measures the forwarder alone.
type loopDev struct {
	hw.EthDev // the rest of the contract is not called
	held      []*hw.Mbuf
}

func (d *loopDev) TxBurst(_ int, pkts []*hw.Mbuf) int {
	d.held = append(d.held, pkts...)
	return len(pkts)
}

func (d *loopDev) RxBurst(_ int, pkts []*hw.Mbuf) int {
	n := copy(pkts, d.held)
	d.held = append(d.held[:0], d.held[n:]...)
	return n
}

// loopForwarder is a macswap forwarder on a loopDev holding a burst of
// 32 minimum-size frames.
func loopForwarder(tb interface{ Fatal(...any) }) (*testpmd.Forwarder, *loopDev) {
	n, err := simhost.NewNIC(sim.NewEngine(1), simhost.NICConfig{Name: "dut"})
	if err != nil {
		tb.Fatal(err)
	}
	dev := &loopDev{held: make([]*hw.Mbuf, 0, 64)}
	for i := range 32 {
		m := n.Pools[0].Get()
		f := make([]byte, 60)
		f[5], f[11] = 1, byte(2+i)
		if err := m.SetData(f); err != nil {
			tb.Fatal(err)
		}
		dev.held = append(dev.held, m)
	}
	f, err := testpmd.New(testpmd.Config{}, dev, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return f, dev
}

// BenchmarkPoll is one burst of 32 frames forwarded in macswap mode.
func BenchmarkPoll(b *testing.B) {
	f, _ := loopForwarder(b)
	b.ReportAllocs()
	for b.Loop() {
		f.Poll(nil)
	}
}

var _ = Describe("Forwarder's per-frame path", func() {
	It("allocates nothing to swap and forward a burst", func() {
		f, dev := loopForwarder(GinkgoT())
		first := append([]byte(nil), dev.held[0].Data()...)
		Expect(testing.AllocsPerRun(101, func() { f.Poll(nil) })).To(BeZero())
		// 102 swaps in all (AllocsPerRun's warm-up run included): even,
		// so every frame is back as it started.
		Expect(dev.held[0].Data()).To(Equal(first))
		Expect(f.Stats(0).TxPackets).To(Equal(uint64(102 * 32)))
	})
})
