package rig_test

import (
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

// tinySweep is the quickstart cut to 2 ms over two rates and two seeds.
func tinySweep() *scenario.Scenario {
	return bundled("quickstart", "duration: 20ms", "duration: 2ms", "warmup: 2ms", "warmup: 1ms",
		"capture: [server.eth0]", "sweep:\n  grid:\n    hosts.client.apps[0].rate_pps: [500000, 1000000]\n  seeds: 2")
}

func pointsJSON(ps []*report.SweepPoint) string {
	b, err := json.Marshal(ps)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

var _ = Describe("a sweep's points", func() {
	It("are the same run one at a time, two at once, or as shards in any order", func() {
		s := tinySweep()
		one, err := rig.RunSweep(s, rig.SweepOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(one).To(HaveLen(4))
		two, err := rig.RunSweep(s, rig.SweepOptions{Jobs: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(pointsJSON(two)).To(Equal(pointsJSON(one)))

		var shards []*report.SweepPoint
		var sources []string
		for _, i := range []int{2, 0, 1} {
			ps, err := rig.RunSweep(s, rig.SweepOptions{Shard: i, Shards: 3, Jobs: 2})
			Expect(err).NotTo(HaveOccurred())
			for _, p := range ps {
				Expect(p.Index % 3).To(Equal(i))
				Expect(p.Shard).To(Equal(string(rune('0'+i)) + "/3"))
				p.Shard = ""
				shards = append(shards, p)
				sources = append(sources, "shard")
			}
		}
		merged, err := rig.MergeSweep(shards, sources)
		Expect(err).NotTo(HaveOccurred())
		plan, err := rig.SweepPlanOf(s, nil)
		Expect(err).NotTo(HaveOccurred())
		whole, err := rig.BuildSweep(plan, one)
		Expect(err).NotTo(HaveOccurred())
		Expect(merged).To(Equal(whole))
		Expect(whole.Expectations[0].Held).To(Equal([]int{0, 2}), "tx_pps >= 999000 fails at 500000 and holds at 1000000")
		Expect(whole.Expectations[0].Knees[0].At).To(Equal("1000000"))
	})

	It("stop together when asked, and say how many ran", func() {
		asked := 0
		_, err := rig.RunSweep(tinySweep(), rig.SweepOptions{Jobs: 2, Stop: func() string {
			asked++
			if asked > 30 {
				return "stopped by the spec"
			}
			return ""
		}})
		var stopped *rig.SweepStoppedError
		Expect(err).To(BeAssignableToTypeOf(stopped))
		Expect(err.Error()).To(ContainSubstring("stopped by the spec"))
	})

	It("are refused for a scenario without a sweep", func() {
		_, err := rig.RunSweep(bundled("quickstart"), rig.SweepOptions{})
		Expect(err).To(MatchError(ContainSubstring("has no sweep: section")))
	})
})

var _ = Describe("variants run on the sweep's pool", func() {
	It("give each run's figures in order, the same whatever the jobs, with a moved price charged", func() {
		s := bundled("quickstart", "duration: 20ms", "duration: 2ms", "warmup: 2ms", "warmup: 1ms", "capture: [server.eth0]", "")
		v := s.Variants[0]
		costs, err := rig.HostCosts(s, v)
		Expect(err).NotTo(HaveOccurred())
		Expect(costs).To(HaveKey("server"))
		Expect(costs["server"].Name()).NotTo(BeEmpty())
		Expect(costs["server"].Digest()).To(HaveLen(64))
		moved, err := s.WithCostOverrides(v, "nic_rx_packet x2", []scenario.CostOverride{
			{Host: "server", Op: "nic_rx_packet", Value: 60, Unit: "cycles", Source: "the spec"}})
		Expect(err).NotTo(HaveOccurred())
		runs := []rig.VariantRun{{Scenario: s, Variant: v, Seed: v.Seed(), Label: "as written"}, {Scenario: s, Variant: moved, Seed: v.Seed(), Label: "moved"}}
		one, err := rig.RunVariants(runs, rig.SweepOptions{})
		Expect(err).NotTo(HaveOccurred())
		two, err := rig.RunVariants(runs, rig.SweepOptions{Jobs: 2})
		Expect(err).NotTo(HaveOccurred())
		Expect(two).To(Equal(one))
		ns := func(t report.Tree) float64 {
			f, ok := t.Lookup(strings.Split("server.cpu.all.ops.nic_rx_packet.ns", "."))
			Expect(ok).To(BeTrue())
			return f.(float64)
		}
		Expect(ns(one[1])).To(BeNumerically("~", 2*ns(one[0]), 0.01*ns(one[0])), "the price doubled, the packets did not change")
		r, err := rig.Run(s, rig.Options{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ns(r.Figures["default"])).To(Equal(ns(one[0])), "the pool runs a variant as rig.Run does")
	})
})
