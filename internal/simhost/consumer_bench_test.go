package simhost_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/stack/sockring"
)

// BenchmarkHandoffCatchUp is gazelle-redis's stack thread in miniature
// (its serveRequests measured: about 60 sockets with a call on its way
// at each poll, 0.38 served a poll): 64 sockets each with one call on
// its way, made by a producer 0 to 80 us ahead of the consumer's clock,
// and a consumer whose every poll, 250 ns apart, catches up to its clock
// with the engine up to 500 ns behind, takes what arrived and gets a new
// call on each socket it served. One op is one hand-off (a call posted,
// made visible by the catch-up or its event, and taken), engine events
// included. "heap" is the Consumer's catch-up; "scan" syncs every
// socket on every poll, as the bridge did before it. visits/op counts
// the call counts a poll looked at per hand-off. Allocations per
// hand-off must be zero.
func BenchmarkHandoffCatchUp(b *testing.B) {
	for _, shape := range []struct {
		name string
		heap bool
	}{{"heap", true}, {"scan", false}} {
		b.Run(shape.name, func(b *testing.B) {
			const (
				n     = 64
				turn  = 250 * time.Nanosecond
				delay = 80000
			)
			eng := sim.NewEngine(1)
			rng := rand.New(rand.NewPCG(1, 2))
			ready := make([]int, 0, n)
			calls := make([]*sockring.Calls, n)
			c := simhost.NewConsumer(eng)
			for i := range calls {
				var h sockring.Handoff
				if shape.heap {
					h = c.NewHandoff(nil, func() { ready = append(ready, i) })
				} else {
					h = simhost.NewHandoff(eng, nil)
				}
				calls[i] = sockring.NewCalls(h)
				calls[i].Post(time.Duration(rng.IntN(delay)))
			}
			visits, posts := 0, 0
			clock := time.Duration(0)
			b.ReportAllocs()
			b.ResetTimer()
			for posts < b.N {
				clock += turn
				eng.RunUntil(clock - time.Duration(rng.IntN(500)))
				if shape.heap {
					c.CatchUp(clock)
				} else {
					ready = ready[:0]
					for i, cl := range calls {
						cl.Sync(clock)
						if cl.Arrived() > 0 {
							ready = append(ready, i)
						}
					}
					visits += n
				}
				visits += len(ready)
				for _, i := range ready {
					calls[i].Take()
					calls[i].Post(clock + time.Duration(rng.IntN(delay)))
					posts++
				}
				ready = ready[:0]
			}
			b.ReportMetric(float64(visits)/float64(posts), "visits/op")
		})
	}
}
