package report_test

import (
	"bytes"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

type inner struct {
	Drops uint64 `json:"drops"`
	Skip  string `json:"skip"`
}

type stats struct {
	inner
	Packets uint64            `json:"packets"`
	Ratio   float64           `json:"ratio"`
	Up      bool              `json:"up"`
	Hidden  int               `json:"-"`
	Queues  []inner           `json:"queues"`
	ByName  map[string]uint32 `json:"by_name"`
}

var _ = Describe("figure trees", func() {
	It("flatten statistics structs by their json names", func() {
		t := report.Tree{}
		t.AddStruct("nic", stats{inner: inner{Drops: 3}, Packets: 10, Ratio: 0.5, Up: true, Hidden: 9,
			Queues: []inner{{Drops: 1}, {Drops: 2}}, ByName: map[string]uint32{"b": 2, "a": 1}})
		Expect(t.Flatten()).To(Equal([]report.Figure{
			{"nic.by_name.a", 1}, {"nic.by_name.b", 2}, {"nic.drops", 3}, {"nic.packets", 10},
			{"nic.queues.0.drops", 1}, {"nic.queues.1.drops", 2}, {"nic.ratio", 0.5}, {"nic.up", 1},
		}))
	})

	It("look paths up", func() {
		t := report.Tree{}
		t.Set("a.b.c", 4)
		v, ok := t.Lookup([]string{"a", "b", "c"})
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal(4.0))
		_, ok = t.Lookup([]string{"a", "x"})
		Expect(ok).To(BeFalse())
	})
})

var _ = Describe("reports", func() {
	r := func() *report.Report {
		a, b := report.Tree{}, report.Tree{}
		a.Set("x.rps", 1000)
		a.Set("x.zero", 0)
		b.Set("x.rps", 2500.5)
		b.Set("x.zero", 0)
		return &report.Report{Savanna: "v", Scenario: "s", File: "s.yaml", Hash: "0123456789abcdef", Seed: 3,
			Variants: []string{"kernel", "lstack"}, Figures: map[string]report.Tree{"kernel": a, "lstack": b},
			Expectations: []report.Expectation{{Expr: "lstack.x.rps > kernel.x.rps * 3", Held: false, Detail: "left 2500.5, right 3000"}}}
	}

	It("print a table of non-zero figures by variant, and failed expectations with their values", func() {
		var buf bytes.Buffer
		Expect(r().WriteTable(&buf)).To(Succeed())
		Expect(buf.String()).To(MatchRegexp(`x\.rps\s+1000\s+2501\n`))
		Expect(buf.String()).NotTo(ContainSubstring("x.zero"))
		Expect(buf.String()).To(ContainSubstring("\nFAIL  lstack.x.rps > kernel.x.rps * 3\n      left 2500.5, right 3000"))
		Expect(r().Passed()).To(BeFalse())
	})

	It("write the same JSON every time", func() {
		var a, b bytes.Buffer
		Expect(r().WriteJSON(&a)).To(Succeed())
		Expect(r().WriteJSON(&b)).To(Succeed())
		Expect(a.Bytes()).To(Equal(b.Bytes()))
		Expect(a.String()).To(ContainSubstring(`"zero": 0`))
	})

	It("write Markdown with every figure", func() {
		var buf bytes.Buffer
		Expect(r().WriteMarkdown(&buf)).To(Succeed())
		Expect(buf.String()).To(ContainSubstring("| `x.zero` | 0 | 0 |"))
		Expect(buf.String()).To(ContainSubstring("- FAIL  `lstack.x.rps > kernel.x.rps * 3`<br>\n  left 2500.5, right 3000"))
	})

	It("draw figures over time: lines that compare variants first, then a panel per core", func() {
		rep := r()
		t := []float64{0.01, 0.02, 0.03}
		rep.Series = []report.Series{
			{Plot: "CPU per core over time: kernel, host web", YLabel: "% of the core", Panel: "core 0", Line: "user", Stacked: true, Ceiling: 100, TimeS: t, Values: []float64{10, 20, 30}},
			{Plot: "CPU per core over time: kernel, host web", YLabel: "% of the core", Panel: "core 0", Line: "kernel", Stacked: true, Ceiling: 100, TimeS: t, Values: []float64{5, 5, 5}},
			{Plot: "CPU per core over time: kernel, host web", YLabel: "% of the core", Panel: "core 1", Line: "user", Stacked: true, Ceiling: 100, TimeS: t, Values: []float64{1, 2, 3}},
			{Plot: "Throughput over time (requests)", YLabel: "requests per second", Line: "kernel wrk", TimeS: t, Values: []float64{100, 200, 300}},
		}
		var buf bytes.Buffer
		Expect(rep.WriteHTML(&buf)).To(Succeed())
		page := buf.String()
		Expect(strings.Count(page, "<svg")).To(Equal(3), "the throughput plot and a panel per core; no latency or CPU bars in this report")
		thr := strings.Index(page, "Throughput over time (requests)")
		cpu := strings.Index(page, "CPU per core over time: kernel, host web")
		Expect(thr).To(BeNumerically(">", 0))
		Expect(cpu).To(BeNumerically(">", thr))
		Expect(page).To(ContainSubstring("core 1"))
		Expect(page).NotTo(ContainSubstring("Series"), "series stay out of the JSON and the page's text")
		var js bytes.Buffer
		Expect(rep.WriteJSON(&js)).To(Succeed())
		Expect(js.String()).NotTo(ContainSubstring("core 0"))
	})
})
