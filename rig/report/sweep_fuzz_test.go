package report_test

import (
	"bytes"
	"testing"

	"github.com/savanna-sim/savanna/rig/report"
)

// FuzzParseSweepPoint feeds arbitrary bytes to the reader of a sweep
// point's file, which simrun merge reads from other machines: it must
// return a point or an error, never panic, and a point it accepts must
// sit where its plan puts it.
func FuzzParseSweepPoint(f *testing.F) {
	p := report.SweepPlan{Savanna: "x", Scenario: "s", File: "s.yaml", Hash: "ab", Variants: []string{"v"}, BaseSeeds: []uint64{1},
		Keys: []string{"k"}, Values: [][]string{{"1", "2"}}, Seeds: 2, Expect: []string{}}
	t := report.Tree{}
	t.Set("a.b", 1.5)
	var b bytes.Buffer
	pt := &report.SweepPoint{Format: report.SweepPointFormat, Plan: p, Index: 3, Variant: "v", Grid: []string{"2"}, Seed: 2, Figures: t}
	if err := pt.WriteJSON(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"savanna-sweep-point/1","plan":{"variants":["v"],"base_seeds":[1],"keys":["k"],"values":[[]],"seeds":1}}`))
	f.Add([]byte(`{"format":"savanna-sweep-point/1","plan":{"variants":["v"],"base_seeds":[1],"keys":[],"values":[],"seeds":1000000000}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := report.ParseSweepPoint(data)
		if err != nil {
			return
		}
		if q.Index < 0 || q.Index >= q.Plan.Points() {
			t.Fatalf("accepted index %d of %d points", q.Index, q.Plan.Points())
		}
	})
}
