package sim_test

import (
	"testing"
	"time"

	"github.com/savanna-sim/savanna/sim"
)

// chain reschedules itself: a steady state of n outstanding events, as a
// model with n timers or links in flight produces.
type chain struct{ rng func() int }

func (c *chain) Fire(e *sim.Engine, arg uint64) {
	e.After(time.Duration(1+c.rng()), c, arg)
}

// BenchmarkEngine measures events per second with 1,000 events in flight;
// b.N events run. Allocations per event must be zero.
func BenchmarkEngine(b *testing.B) {
	e := sim.NewEngine(1)
	r := e.RNG("bench")
	c := &chain{rng: func() int { return r.IntN(1000) }}
	for i := 0; i < 1000; i++ {
		e.At(time.Duration(i), c, uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEngineMillion runs one million events per iteration, the run
// the foundation issue asks to be measured.
func BenchmarkEngineMillion(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e := sim.NewEngine(1)
		r := e.RNG("bench")
		c := &chain{rng: func() int { return r.IntN(1000) }}
		for j := 0; j < 1000; j++ {
			e.At(time.Duration(j), c, uint64(j))
		}
		for j := 0; j < 1_000_000; j++ {
			e.Step()
		}
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "events/s")
}
