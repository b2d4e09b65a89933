package report_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/bench/report"
	"github.com/savanna-sim/savanna/bench/work"
)

// familyCell is a savanna cell of workload w at family with one metric
// of the given values, one run each.
func familyCell(w string, mtu, family int, metric string, higher bool, vs ...float64) *report.Cell {
	c := &report.Cell{Workload: w, Network: "savanna", MTU: mtu, Family: family}
	for _, v := range vs {
		c.Runs = append(c.Runs, work.Result{Workload: w, Network: "savanna", MTU: mtu, Family: family,
			Metrics: []work.Metric{{Name: metric, Unit: "u", Value: v, Higher: higher}}})
	}
	c.Aggregate()
	return c
}

var _ = Describe("the IPv6 / IPv4 goals", func() {
	It("divide savanna's IPv6 work per CPU-second by its IPv4 one, at 0.95, and say when the gap is noise", func() {
		r := &report.Report{Cells: []*report.Cell{
			familyCell("bulk", 1500, 4, "mb_per_cpu_s", true, 1000, 1010, 990),
			familyCell("bulk", 1500, 6, "mb_per_cpu_s", true, 960, 970, 950),
			familyCell("bulk", 9000, 4, "mb_per_cpu_s", true, 2000, 2100, 1900),
			familyCell("bulk", 9000, 6, "mb_per_cpu_s", true, 1800, 2000, 1700),
			// CPU per round trip: IPv6 costs 25% more.
			familyCell("pingpong", 1500, 4, "cpu_per_100k", false, 0.4, 0.4, 0.4),
			familyCell("pingpong", 1500, 6, "cpu_per_100k", false, 0.5, 0.5, 0.5),
		}}
		r.CheckGoals()
		got := map[string]report.Goal{}
		for _, g := range r.Goals {
			got[g.Text] = g
		}
		b15 := got["savanna IPv6 / IPv4 bulk MB per CPU-second at MTU 1500"]
		Expect(b15.Known).To(BeTrue())
		Expect(b15.Ratio).To(BeNumerically("~", 0.96, 1e-9))
		Expect(b15.Met).To(BeTrue())
		Expect(b15.Target).To(Equal("≥ 0.95"))
		b90 := got["savanna IPv6 / IPv4 bulk MB per CPU-second at MTU 9000"]
		Expect(b90.Ratio).To(BeNumerically("~", 0.9, 1e-9))
		Expect(b90.Met).To(BeFalse())
		Expect(b90.Note).To(ContainSubstring("the repetitions overlap"), "1,700–2,000 overlaps 1,900–2,100")
		Expect(b90.Note).To(ContainSubstring("IPv4 2,000 (1,900–2,100), IPv6 1,800 (1,700–2,000) u"))
		pp := got["savanna IPv6 / IPv4 ping-pong round trips per CPU-second"]
		Expect(pp.Ratio).To(BeNumerically("~", 0.8, 1e-9))
		Expect(pp.Met).To(BeFalse())
		Expect(pp.Note).NotTo(ContainSubstring("overlap"), "no overlap: a real gap")
		Expect(pp.Note).To(ContainSubstring("PROFILE.md"))
		Expect(b15.Note).To(BeEmpty(), "met")
		Expect(got).NotTo(HaveKey("savanna IPv6 / IPv4 connection setups per CPU-second"), "setup not run at IPv6: no goal")
		var b strings.Builder
		Expect(r.Markdown(&b)).To(Succeed())
		Expect(b.String()).To(ContainSubstring("| savanna IPv6 / IPv4 bulk MB per CPU-second at MTU 9000 | 0.900 | ≥ 0.95 | no (note 1) |"))
		Expect(b.String()).To(ContainSubstring("| savanna IPv6/IPv4 | 9000 |  | 0.900× |"))
		Expect(b.String()).To(ContainSubstring("| savanna | 9000 | IPv6 | 1,800 (1,700–2,000) |"))
	})
})

func run(network string, mtu int, rate float64, drops uint64) work.Result {
	return work.Result{Workload: "pingpong", Network: network, MTU: mtu,
		Metrics: []work.Metric{{Name: "rate", Unit: "rt/s", Value: rate, Higher: true}},
		Drops:   netw.Drops{Link: drops, Detail: []netw.Counter{{Name: "link.x", Value: drops}}}}
}

var _ = Describe("Median", func() {
	DescribeTable("takes the middle",
		func(vs []float64, want float64) { Expect(report.Median(vs)).To(Equal(want)) },
		Entry("odd", []float64{3, 1, 2}, 2.0),
		Entry("even", []float64{4, 1, 3, 2}, 2.5),
		Entry("empty", []float64{}, 0.0),
	)
})

var _ = Describe("Report", func() {
	It("aggregates repetitions, sums drops, checks goals and prints them", func() {
		sv := &report.Cell{Workload: "pingpong", Network: "savanna", MTU: 1500,
			Runs: []work.Result{run("savanna", 1500, 100, 0), run("savanna", 1500, 300, 1), run("savanna", 1500, 200, 0)}}
		gv := &report.Cell{Workload: "pingpong", Network: "gvisor", MTU: 1500,
			Runs: []work.Result{run("gvisor", 1500, 50, 0)}}
		kn := &report.Cell{Workload: "pingpong", Network: "kernel", MTU: 65536,
			Runs: []work.Result{run("kernel", 65536, 400, 0)}}
		r := &report.Report{Cells: []*report.Cell{sv, gv, kn}, Env: report.Env{Params: work.Tiny(), Reps: 3}}
		for _, c := range r.Cells {
			c.Aggregate()
		}
		s, ok := sv.Stat("rate")
		Expect(ok).To(BeTrue())
		Expect(s.Median).To(Equal(200.0))
		Expect(s.Min).To(Equal(100.0))
		Expect(s.Max).To(Equal(300.0))
		Expect(sv.Drops.Link).To(Equal(uint64(1)))
		r.CheckGoals()
		var texts []string
		for _, g := range r.Goals {
			if g.Known {
				texts = append(texts, g.Text)
			}
		}
		Expect(texts).To(ConsistOf("ping-pong rate, savanna/gvisor", "ping-pong rate, savanna/kernel"))
		for _, g := range r.Goals {
			switch g.Text {
			case "ping-pong rate, savanna/gvisor":
				Expect(g.Ratio).To(Equal(4.0))
				Expect(g.Met).To(BeTrue())
			case "ping-pong rate, savanna/kernel":
				Expect(g.Ratio).To(Equal(0.5))
				Expect(g.Met).To(BeFalse())
			}
		}
		var b strings.Builder
		Expect(r.Markdown(&b)).To(Succeed())
		md := b.String()
		Expect(md).To(ContainSubstring("| savanna | 1500 | IPv4 | 200 (100–300) | 1 / 0 / 0 |"))
		Expect(md).To(ContainSubstring("| savanna/gvisor | 1500 | IPv4 | 4.00× |"))
		Expect(md).To(ContainSubstring("link.x 1;"))
	})
})
