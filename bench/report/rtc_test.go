package report_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/report"
	"github.com/savanna-sim/savanna/bench/work"
)

// netCell is a cell of network at IPv4 with one metric of the given
// values, one run each.
func netCell(w, network string, mtu int, metric string, higher bool, vs ...float64) *report.Cell {
	c := &report.Cell{Workload: w, Network: network, MTU: mtu, Family: 4}
	for _, v := range vs {
		c.Runs = append(c.Runs, work.Result{Workload: w, Network: network, MTU: mtu, Family: 4,
			Metrics: []work.Metric{{Name: metric, Unit: "u", Value: v, Higher: higher}}})
	}
	c.Aggregate()
	return c
}

var _ = Describe("the run-to-completion goals", func() {
	goals := func(r *report.Report) map[string]report.Goal {
		r.CheckGoals()
		got := map[string]report.Goal{}
		for _, g := range r.Goals {
			got[g.Text] = g
		}
		return got
	}
	const p50 = "ping-pong p50 in µs, savanna-rtc (the figure, not a ratio)"
	const bulk = "bulk MB per CPU-second, savanna-rtc/kernel at MTU 9000"

	It("check savanna-rtc's ping-pong p50 against 3 µs and its bulk at MTU 9000 against the kernel's, with the figures when not met", func() {
		r := &report.Report{Cells: []*report.Cell{
			netCell("pingpong", "savanna-rtc", 1500, "p50", false, 2.5, 3.5, 2.9),
			netCell("bulk", "savanna-rtc", 1500, "mb_per_cpu_s", true, 5000),
			netCell("bulk", "savanna-rtc", 9000, "mb_per_cpu_s", true, 1800, 1900, 2000),
			netCell("bulk", "kernel", 65536, "mb_per_cpu_s", true, 2500, 2600, 2400),
		}}
		got := goals(r)
		Expect(got[p50]).To(Equal(report.Goal{Text: p50, Ratio: 2.9, Target: "≤ 3", Met: true, Known: true}))
		b := got[bulk]
		Expect(b.Known).To(BeTrue())
		Expect(b.Ratio).To(BeNumerically("~", 0.76, 1e-9), "1,900 / 2,500, at MTU 9000 and not at 1500")
		Expect(b.Met).To(BeFalse())
		Expect(b.Note).To(ContainSubstring("savanna-rtc 1,900 (1,800–2,000), kernel 2,500 (2,400–2,600) MB/CPU-s"))
		Expect(b.Note).NotTo(ContainSubstring("overlap"))
		Expect(b.Note).To(ContainSubstring("PROFILE.md"))

		r.Cells[0] = netCell("pingpong", "savanna-rtc", 1500, "p50", false, 3.2)
		got = goals(r)
		Expect(got[p50].Met).To(BeFalse())
		Expect(got[p50].Note).To(ContainSubstring("p50 3.20 µs"))

		var md strings.Builder
		Expect(r.Markdown(&md)).To(Succeed())
		Expect(md.String()).To(ContainSubstring("| " + bulk + " | 0.760 | ≥ 1 | no (note"))
		Expect(md.String()).To(ContainSubstring("| savanna-rtc/kernel | 9000 | IPv4 | 0.760× |"))
		Expect(md.String()).To(ContainSubstring("savanna-rtc/savanna and savanna-rtc/kernel are"))
	})

	It("are unknown when the kernel's bulk is missing, and absent when savanna-rtc did not run", func() {
		r := &report.Report{Cells: []*report.Cell{netCell("bulk", "savanna-rtc", 9000, "mb_per_cpu_s", true, 1800)}}
		got := goals(r)
		Expect(got).To(HaveKey(bulk))
		Expect(got[bulk].Known).To(BeFalse())
		Expect(got).NotTo(HaveKey(p50))

		r = &report.Report{Cells: []*report.Cell{
			netCell("pingpong", "savanna", 1500, "p50", false, 7),
			netCell("bulk", "kernel", 65536, "mb_per_cpu_s", true, 2500),
		}}
		got = goals(r)
		Expect(got).NotTo(HaveKey(bulk))
		Expect(got).NotTo(HaveKey(p50))
		var md strings.Builder
		Expect(r.Markdown(&md)).To(Succeed())
		Expect(md.String()).NotTo(ContainSubstring("savanna-rtc"))
	})
})
