package report_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/bench/report"
	"github.com/savanna-sim/savanna/bench/work"
)

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
		Expect(md).To(ContainSubstring("| savanna | 1500 | 200 (100–300) | 1 / 0 / 0 |"))
		Expect(md).To(ContainSubstring("| savanna/gvisor | 1500 | 4.00× |"))
		Expect(md).To(ContainSubstring("link.x 1;"))
	})
})
