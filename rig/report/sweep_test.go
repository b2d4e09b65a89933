package report_test

import (
	"bytes"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// plan is a sweep of one variant over two keys (3 × 2 grid points) and
// three seeds.
func plan() report.SweepPlan {
	return report.SweepPlan{
		Savanna: "test", Scenario: "s", File: "s.yaml", Hash: strings.Repeat("a", 64),
		Variants: []string{"v"}, BaseSeeds: []uint64{10},
		Keys:   []string{"n", "m"},
		Values: [][]string{{"8", "16", "32"}, {"x", "y"}},
		Seeds:  3, Expect: []string{"v.f > 0"},
	}
}

// point is a point of plan() with figure f.
func point(p report.SweepPlan, k int, f float64) *report.SweepPoint {
	_, g, s := p.Locate(k)
	t := report.Tree{}
	t.Set("app.f", f)
	return &report.SweepPoint{Format: report.SweepPointFormat, Plan: p, Index: k, Variant: "v", Grid: p.GridValues(g), Seed: 10 + uint64(s), Figures: t}
}

var _ = Describe("a sweep's report", func() {
	It("finds the knee: the first value whose majority outcome differs from the first value's", func() {
		p := plan()
		// Grid points in order: (8,x) (8,y) (16,x) (16,y) (32,x) (32,y).
		// Along n at m=x: 0/3, 1/3, 2/3 held: failed, failed, held: knee 32.
		// Along n at m=y: 3/3, 2/3, 0/3: held, held, failed: knee 32.
		// Along m: at n=16 failed (1/3) then held (2/3): knee y.
		exps := []report.SweepExpectation{{Expr: "v.f > 0", Held: []int{0, 3, 1, 2, 2, 0}}}
		s := report.NewSweep(p, nil, exps)
		var got []string
		for _, k := range s.Expectations[0].Knees {
			got = append(got, k.Key+"|"+k.Where+"|"+k.First+"|"+k.At)
		}
		Expect(got).To(Equal([]string{
			"n|m=x|failed|32", "n|m=y|held|32",
			"m|n=8|failed|y", "m|n=16|failed|y", "m|n=32|held|y",
		}))
	})

	It("summarises seeds as the median and the range", func() {
		p := plan()
		p.Keys, p.Values, p.Seeds = []string{"n"}, [][]string{{"8", "16"}}, 4
		var pts []*report.SweepPoint
		for k, f := range []float64{5, 1, 3, 100, 7, 7, 7, 7} {
			pts = append(pts, point(p, k, f))
		}
		s := report.NewSweep(p, pts, []report.SweepExpectation{{Expr: "v.app.f > 0", Held: []int{4, 4}}})
		Expect(s.Figures["v.app.f"]).To(Equal([]report.Summary{{N: 4, Median: 4, Min: 1, Max: 100}, {N: 4, Median: 7, Min: 7, Max: 7}}))
		var b bytes.Buffer
		Expect(s.WriteTable(&b)).To(Succeed())
		Expect(b.String()).To(MatchRegexp(`v\.app\.f +4 \[1–100\] +7\n`))
	})
})

var _ = Describe("a sweep point's file", func() {
	It("reads back what it wrote", func() {
		p := point(plan(), 7, 0.1+0.2)
		var b bytes.Buffer
		Expect(p.WriteJSON(&b)).To(Succeed())
		q, err := report.ParseSweepPoint(b.Bytes())
		Expect(err).NotTo(HaveOccurred())
		Expect(q).To(Equal(p))
	})

	DescribeTable("refuses what is not a point of its sweep, saying what",
		func(edit func(string) string, want string) {
			var b bytes.Buffer
			Expect(point(plan(), 7, 1).WriteJSON(&b)).To(Succeed())
			_, err := report.ParseSweepPoint([]byte(edit(b.String())))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("not JSON", func(string) string { return "{" }, "not a sweep point file"),
		Entry("another format", func(s string) string {
			return strings.Replace(s, report.SweepPointFormat, "other/1", 1)
		}, `format "other/1"`),
		Entry("an unknown field", func(s string) string { return strings.Replace(s, `"index"`, `"extra": 1, "index"`, 1) }, "unknown field"),
		Entry("an index outside the sweep", func(s string) string { return strings.Replace(s, `"index": 7`, `"index": 18`, 1) }, "index 18 outside the sweep's 18 points"),
		Entry("a point where the plan puts another", func(s string) string { return strings.Replace(s, `"seed": 11`, `"seed": 12`, 1) }, "but the plan puts variant v"),
		Entry("no seeds", func(s string) string { return strings.Replace(s, `"seeds": 3`, `"seeds": 0`, 1) }, "plan: 0 seeds"),
		Entry("a figure that is not a number", func(s string) string { return strings.Replace(s, `"f": 1`, `"f": "1"`, 1) }, "app.f: a figure is a number"),
	)
})
