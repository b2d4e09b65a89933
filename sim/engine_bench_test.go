package sim_test

import (
	"math/rand/v2"
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

// BenchmarkEngineShapes measures the queue under the schedules models
// make besides BenchmarkEngine's: events for the current instant
// (doorbells, a core's next turn), a wide spread of timers far ahead
// (retransmission and keep-alive timers of many connections), and a mix.
// Each reports events per second; allocations per event must be zero.
func BenchmarkEngineShapes(b *testing.B) {
	shapes := []struct {
		name     string
		inFlight int
		delay    func(r *rand.Rand) time.Duration
	}{
		// Half the events at the current instant, half a few ns ahead.
		{"now", 64, func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(2) * r.IntN(8)) }},
		// 100,000 timers from 1 µs to 1 s ahead.
		{"timers-100k", 100_000, func(r *rand.Rand) time.Duration {
			return time.Microsecond + time.Duration(r.Int64N(int64(time.Second)))
		}},
		// A data plane: many events within a microsecond, a few far.
		{"mixed", 10_000, func(r *rand.Rand) time.Duration {
			switch r.IntN(16) {
			case 0:
				return time.Duration(r.Int64N(int64(200 * time.Millisecond)))
			case 1, 2, 3:
				return 0
			default:
				return time.Duration(r.IntN(1000))
			}
		}},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			e := sim.NewEngine(1)
			r := e.RNG("bench")
			c := &chainOf{delay: func() time.Duration { return s.delay(r) }}
			for i := 0; i < s.inFlight; i++ {
				e.After(s.delay(r), c, uint64(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Step()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// chainOf reschedules itself at a delay of its own distribution.
type chainOf struct{ delay func() time.Duration }

func (c *chainOf) Fire(e *sim.Engine, arg uint64) { e.After(c.delay(), c, arg) }
