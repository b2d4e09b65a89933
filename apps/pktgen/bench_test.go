package pktgen_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/pktgen"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
)

// loopDev is a port whose wire loops back: what TxBurst takes, the next
// RxBurst returns, so a generator on it measures its own per-frame path
// (build, send, parse what came back) and nothing of a NIC model's.
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

// clock is a meter whose time the loop advances; pktgen charges nothing
// itself (its port's driver does).
type clock struct {
	hw.Meter
	now time.Duration
}

func (c *clock) Now() time.Duration { return c.now }

// loopGenerator is a generator sending as fast as it can into a loopDev,
// with mbufs from a simulated NIC's pool.
func loopGenerator(tb interface{ Fatal(...any) }) (*pktgen.Generator, *clock) {
	n, err := simhost.NewNIC(sim.NewEngine(1), simhost.NICConfig{Name: "gen"})
	if err != nil {
		tb.Fatal(err)
	}
	dev := &loopDev{held: make([]*hw.Mbuf, 0, 64)}
	g, err := pktgen.New(pktgen.Config{Flows: 8}, endpoints(n, n), dev, 0, n.Pools[0])
	if err != nil {
		tb.Fatal(err)
	}
	return g, &clock{}
}

// BenchmarkPoll is one turn of a generator at full rate: receive the
// 32 frames sent in the turn before (parse, match, record the round
// trip), then build and send 32 more.
func BenchmarkPoll(b *testing.B) {
	g, c := loopGenerator(b)
	g.Poll(c)
	b.ReportAllocs()
	for b.Loop() {
		c.now += time.Microsecond
		g.Poll(c)
	}
	b.StopTimer()
	if s := g.Stats(c.now); s.RxPackets == 0 || s.RxForeign != 0 {
		b.Fatalf("rx %d frames, %d foreign", s.RxPackets, s.RxForeign)
	}
}

var _ = Describe("Generator's per-frame path", func() {
	It("allocates nothing to build, send, receive and measure a burst", func() {
		g, c := loopGenerator(GinkgoT())
		g.Poll(c)
		allocs := testing.AllocsPerRun(100, func() {
			c.now += time.Microsecond
			g.Poll(c)
		})
		Expect(allocs).To(BeZero())
		s := g.Stats(c.now)
		Expect(s.RxPackets).To(BeNumerically(">=", 100*32))
		Expect(s.RxForeign).To(BeZero())
	})
})
