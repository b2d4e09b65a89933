//go:build scenariobench

package sim_test

// The bundled scenarios as benchmarks, to profile where a run's wall
// time goes (simrun has no profiling flag):
//
//	go test -tags scenariobench -run XXX -bench 'Scenario/quickstart' \
//	    -benchtime 1x -cpuprofile /tmp/quickstart.prof ./sim/
//	go tool pprof -top sim.test /tmp/quickstart.prof
//
// The build tag keeps the rig, the stack and the apps out of the engine's
// own test binary. Only test imports reach the rig from sim, which the
// dependency rule (internal/archtest) allows.

import (
	"testing"
	"time"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/scenarios"
)

// BenchmarkScenario runs each bundled scenario once per iteration and
// reports simulated seconds per wall second and engine events per wall
// second.
func BenchmarkScenario(b *testing.B) {
	for _, name := range scenarios.Names() {
		b.Run(name, func(b *testing.B) {
			data, err := scenarios.Read(name)
			if err != nil {
				b.Fatal(err)
			}
			var simulated time.Duration
			var events uint64
			for i := 0; i < b.N; i++ {
				s, err := scenario.Parse("scenarios/"+name+".yaml", data)
				if err != nil {
					b.Fatal(err)
				}
				opts := rig.Options{Progress: func(p rig.Progress) {
					if p.Done {
						simulated += p.Sim
						events += p.Events
					}
				}}
				if _, err := rig.Run(s, opts); err != nil {
					b.Fatalf("%s: %v", name, err)
				}
			}
			b.ReportMetric(simulated.Seconds()/b.Elapsed().Seconds(), "sim-s/wall-s")
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
