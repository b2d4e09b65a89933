package cost_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("frozen machine cost files", func() {
	load := func(key string) *cost.Model {
		m, err := cost.For(costops.Table()).Model(key)
		Expect(err).NotTo(HaveOccurred())
		return m
	}

	It("embeds default, kunpeng920 and xeon-e5-2650v2 under the keys a scenario names", func() {
		Expect(cost.ModelKeys()).To(Equal([]string{"default", "kunpeng920", "xeon-e5-2650v2"}))
		for _, mi := range cost.Models() {
			Expect(mi.Description).NotTo(BeEmpty(), mi.Key)
			Expect(mi.Frozen).To(Equal(mi.Key != "default"), mi.Key)
		}
	})

	DescribeTable("prices every operation of the run's table with a source and an uncertainty",
		func(key, name string) {
			m := load(key)
			Expect(m.Name()).To(Equal(name))
			Expect(m.Digest()).To(MatchRegexp(`^[0-9a-f]{64}$`))
			data, err := cost.ModelBytes(key)
			Expect(err).NotTo(HaveOccurred())
			for _, o := range costops.Table().Ops() {
				e := m.Entries[o.Op]
				Expect(e.Source).NotTo(BeEmpty(), o.Key)
				Expect(e.Unit).NotTo(BeEmpty(), o.Key)
				// Stated as a key, not merely defaulted: 0 is allowed for
				// identities (app_nanos) only.
				Expect(string(data)).To(MatchRegexp(`(?m)^  `+o.Key+`:(\s*\n\s*)?\s*\{value:[^\n]*uncertainty: `), o.Key)
				if e.Uncertainty == 0 {
					Expect(e.Value == 0 || o.Key == "app_nanos").To(BeTrue(), "%s: uncertainty 0 on a non-identity price", o.Key)
				}
				Expect(m.Uncertainty(o.Op)).To(Equal(e.Uncertainty))
				if e.Spread > 0 {
					Expect(e.SpreadSource).NotTo(BeEmpty(), o.Key)
				}
			}
		},
		Entry("Kunpeng 920-4826", "kunpeng920", "kunpeng920-2026.12"),
		Entry("Xeon E5-2650 v2", "xeon-e5-2650v2", "xeon-e5-2650v2-2026.12"),
	)

	It("keeps the frozen files' structure identical to default.yaml's: the same operations, in the same order", func() {
		keys := func(key string) []string {
			data, err := cost.ModelBytes(key)
			Expect(err).NotTo(HaveOccurred())
			_, body, ok := strings.Cut(string(data), "\ncosts:\n")
			Expect(ok).To(BeTrue(), key)
			var out []string
			for _, l := range strings.Split(body, "\n") {
				if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && !strings.HasPrefix(strings.TrimSpace(l), "#") {
					k, _, _ := strings.Cut(strings.TrimSpace(l), ":")
					out = append(out, k)
				}
			}
			return out
		}
		def := keys("default")
		Expect(def).NotTo(BeEmpty())
		Expect(keys("kunpeng920")).To(Equal(def))
		Expect(keys("xeon-e5-2650v2")).To(Equal(def))
	})

	It("has spread only where it gives a spread_source, and none in default.yaml", func() {
		Expect(cost.For(costops.Table()).Default().Spreads()).To(BeNil())
		s := load("xeon-e5-2650v2").Spreads()
		Expect(s).NotTo(BeNil())
		Expect(s[hw.CostWakeup]).To(BeNumerically(">", 0))
		Expect(s[hw.CostSyscall]).To(BeZero())
	})

	It("refuses an unknown model, listing the valid ones", func() {
		_, err := cost.For(costops.Table()).Model("kunpeng930")
		Expect(err).To(MatchError(`no embedded cost model "kunpeng930"; valid models: default, kunpeng920, xeon-e5-2650v2 (simrun list shows them)`))
		_, err = cost.For(costops.Table()).Model("../default")
		Expect(err).To(MatchError(ContainSubstring("no embedded cost model")))
	})

	It("digests the bytes as loaded: the same text the same digest, one byte changed another", func() {
		data := cost.DefaultBytes()
		a, err := cost.For(costops.Table()).Parse("a.yaml", data)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Digest()).To(Equal(cost.For(costops.Table()).Default().Digest()))
		b, err := cost.For(costops.Table()).Parse("b.yaml", append(data, '\n'))
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Digest()).NotTo(Equal(a.Digest()))
		o, err := a.WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 1, Unit: "ns", Source: "x"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(o.Digest()).To(Equal(a.Digest()), "overrides are listed apart, the digest is the file's")
	})
})

var _ = Describe("per-op uncertainty and spread fields", func() {
	parse := func(entry string) error {
		data := strings.Replace(string(cost.DefaultBytes()),
			`  syscall:
    {value: 100, unit: ns, source:`, "  syscall:\n    {value: 100, unit: ns, "+entry+" source:", 1)
		Expect(data).NotTo(Equal(string(cost.DefaultBytes())), "the default's syscall line moved")
		_, err := cost.For(costops.Table()).Parse("m.yaml", []byte(data))
		return err
	}

	It("reads uncertainty, spread and spread_source", func() {
		Expect(parse(`uncertainty: 0.3, spread: 0.2, spread_source: "perf sched",`)).To(Succeed())
	})

	DescribeTable("names file, line and key of a bad field",
		func(entry, want string) {
			Expect(parse(entry)).To(MatchError(MatchRegexp(want)))
		},
		Entry("negative uncertainty", `uncertainty: -0.1,`, `^m\.yaml:\d+:\d+: key "costs\.syscall\.uncertainty": uncertainty -0\.1; want a relative figure from 0 to 1`),
		Entry("uncertainty above 1", `uncertainty: 1.5,`, `^m\.yaml:\d+:\d+: key "costs\.syscall\.uncertainty"`),
		Entry("negative spread", `spread: -1, spread_source: x,`, `^m\.yaml:\d+:\d+: key "costs\.syscall\.spread": spread -1`),
		Entry("spread without its source", `spread: 0.2,`, `^m\.yaml:\d+:\d+: key "costs\.syscall\.spread_source": a spread needs its own spread_source`),
		Entry("a source without a spread", `spread_source: x,`, `^m\.yaml:\d+:\d+: key "costs\.syscall\.spread_source": spread_source without a spread`),
		Entry("a mistyped key", `uncertanity: 0.2,`, `^m\.yaml:\d+:\d+: key "costs\.syscall\.uncertanity": unknown key`),
	)

	It("requires every uncertainty in a frozen file, naming line and key of the first missing one", func() {
		data := strings.Replace(string(cost.DefaultBytes()), "costs:\n", "frozen: true\ncosts:\n", 1)
		_, err := cost.For(costops.Table()).Parse("f.yaml", []byte(data))
		Expect(err).To(MatchError(MatchRegexp(`^f\.yaml:\d+:\d+: key "costs\.[a-z0-9_]+\.uncertainty": a frozen file states every price's uncertainty; missing for `)))
	})

	It("gives an override's uncertainty and spread the same checks, by key", func() {
		_, err := cost.For(costops.Table()).Default().WithOverrides("s.yaml: hosts.a.cost.overrides", map[string]cost.Entry{"syscall": {Value: 1, Unit: "ns", Source: "x", Spread: 0.5}})
		Expect(err).To(MatchError(`s.yaml: hosts.a.cost.overrides: key "costs.syscall.spread_source": a spread needs its own spread_source`))
	})
})
