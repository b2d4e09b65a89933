package scenario_test

import (
	"testing"

	"github.com/savanna-sim/savanna/rig/scenario"
)

// FuzzParseSweep feeds scenario files with sweep sections to the
// loader: it must return a scenario or an error, never panic, and the
// points of a sweep it accepts stay within MaxSweepPoints.
func FuzzParseSweep(f *testing.F) {
	f.Add([]byte(swept))
	f.Add([]byte(base + "sweep: {seeds: 3}\n"))
	f.Add([]byte(base + "sweep:\n  grid:\n    links[0].loss: [0.1, 2]\n"))
	f.Add([]byte(base + "variants: {a: {}}\nsweep:\n  grid: {\"links[0].jitter\": [1us, 2us], duration: [1ms]}\n  seeds: 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse("fuzz.yaml", data)
		if err != nil || s.Sweep() == nil {
			return
		}
		if n := len(s.Sweep().Points(nil)); n > scenario.MaxSweepPoints {
			t.Fatalf("%d points", n)
		}
	})
}
