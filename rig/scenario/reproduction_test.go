package scenario_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/scenario"
)

// base ends at line 18; a reproduction section starts at line 19 and
// its first row is on line 20.
const rowsAt = "reproduction:\n"

var _ = Describe("reproduction rows", func() {
	It("keeps a published figure's text as written, and its value", func() {
		s, err := scenario.Parse("t.yaml", []byte(base+rowsAt+
			"  - {figure: p99, kind: predicted, published: 14.255, savanna: '1', sensitivity: [syscall, wakeup]}\n"+
			"  - {figure: rps, kind: declared, published: 132402.98, savanna: '2'}\n"+
			"  - {figure: share, kind: derived, published: 0.10, savanna: '3'}\n"+
			"  - {figure: n, kind: derived, published: 1000, savanna: '4'}\n"))
		Expect(err).NotTo(HaveOccurred())
		rows := s.File.Reproduction
		Expect(rows[0].Published.Text).To(Equal("14.255"))
		Expect(rows[0].Published.Value).To(Equal(14.255))
		Expect(rows[0].Sensitivity).To(Equal([]string{"syscall", "wakeup"}))
		Expect(rows[1].Published.Text).To(Equal("132402.98"))
		Expect(rows[2].Published.Text).To(Equal("0.10"), "trailing zeros are the article's precision")
		Expect(rows[3].Published.Value).To(Equal(1000.0))
		Expect(rows[1].Kind).To(Equal(scenario.KindDeclared))
	})

	DescribeTable("refuses a bad row with file, line, column and key",
		func(row, want string) {
			_, err := scenario.Parse("t.yaml", []byte(base+rowsAt+row))
			Expect(err).To(MatchError(MatchRegexp(want)))
		},
		Entry("no kind",
			"  - {figure: rps, published: 1, savanna: '1'}\n",
			`^t\.yaml:20:5: key "reproduction\[0\]\.kind": kind is required: predicted .*, declared .* or derived`),
		Entry("an unknown kind",
			"  - {figure: rps, kind: guessed, published: 1, savanna: '1'}\n",
			`^t\.yaml:20:\d+: key "reproduction\[0\]\.kind": kind "guessed"; expected one of predicted, declared, derived`),
		Entry("sensitivity on a declared row",
			"  - {figure: rps, kind: declared, published: 1, savanna: '1', sensitivity: [syscall]}\n",
			`^t\.yaml:20:\d+: key "reproduction\[0\]\.sensitivity": sensitivity is for predicted rows only: a declared row`),
		Entry("sensitivity on a derived row",
			"  - {figure: rps, kind: derived, published: 1, savanna: '1', sensitivity: [syscall]}\n",
			`key "reproduction\[0\]\.sensitivity": sensitivity is for predicted rows only: a derived row`),
		Entry("an unknown cost op",
			"  - {figure: rps, kind: predicted, published: 1, savanna: '1'}\n  - {figure: x, kind: predicted, published: 1, savanna: '1', sensitivity: [syscall, sycsall]}\n",
			`^t\.yaml:21:\d+: key "reproduction\[1\]\.sensitivity\[1\]": unknown cost op "sycsall"; the ops are the keys of sim/cost/data/default\.yaml`),
		Entry("an op given twice",
			"  - {figure: rps, kind: predicted, published: 1, savanna: '1', sensitivity: [syscall, syscall]}\n",
			`key "reproduction\[0\]\.sensitivity\[1\]": op "syscall" given twice`),
		Entry("an empty sensitivity list",
			"  - {figure: rps, kind: predicted, published: 1, savanna: '1', sensitivity: []}\n",
			`key "reproduction\[0\]\.sensitivity": empty; name the cost ops`),
		Entry("a sensitivity that is not a list",
			"  - {figure: rps, kind: predicted, published: 1, savanna: '1', sensitivity: syscall}\n",
			`^t\.yaml:20:\d+: key "reproduction\[0\]\.sensitivity": expected a list`),
		Entry("no published figure",
			"  - {figure: rps, kind: predicted, savanna: '1'}\n",
			`^t\.yaml:20:5: key "reproduction\[0\]\.published": published is required`),
		Entry("a published figure that is not a number",
			"  - {figure: rps, kind: predicted, published: many, savanna: '1'}\n",
			`^t\.yaml:20:\d+: key "reproduction\[0\]\.published": expected the article's figure as a decimal number .*found "many"`),
		Entry("a published figure in hexadecimal",
			"  - {figure: rps, kind: predicted, published: 0x10, savanna: '1'}\n",
			`key "reproduction\[0\]\.published": expected the article's figure as a decimal number`),
		Entry("a published figure that is a list",
			"  - {figure: rps, kind: predicted, published: [1], savanna: '1'}\n",
			`key "reproduction\[0\]\.published": expected the article's figure as a number`),
		Entry("no figure name",
			"  - {kind: predicted, published: 1, savanna: '1'}\n",
			`key "reproduction\[0\]\.figure": figure is required`),
		Entry("no expression",
			"  - {figure: rps, kind: predicted, published: 1}\n",
			`key "reproduction\[0\]\.savanna": savanna is required`),
		Entry("an unknown key in a row",
			"  - {figure: rps, kind: predicted, published: 1, savanna: '1', sensitivty: [syscall]}\n",
			`key "reproduction\[0\]\.sensitivty": unknown key; expected one of: figure, kind, note, published, savanna, sensitivity`),
	)

	It("checks the rows a variant's overrides change", func() {
		_, err := scenario.Parse("t.yaml", []byte(base+rowsAt+
			"  - {figure: rps, kind: predicted, published: 1, savanna: '1'}\n"+
			"variants:\n  v: {reproduction.0.kind: estimated}\n"))
		Expect(err).To(MatchError(ContainSubstring(`variant v: t.yaml:22:7: key "reproduction[0].kind": kind "estimated"`)))
	})
})

var _ = Describe("cost overrides on a derived variant", func() {
	It("sets a price on a host without a cost section, and on one with overrides, leaving the original alone", func() {
		s, err := scenario.Parse("t.yaml", []byte(replace(base, "    stack: {kind: lstack, cores: [1, 2]}\n",
			"    stack: {kind: lstack, cores: [1, 2]}\n    cost: {overrides: {syscall: {value: 90, unit: ns, source: measured}}}\n")))
		Expect(err).NotTo(HaveOccurred())
		v := s.Variants[0]
		d, err := s.WithCostOverrides(v, "wakeup x1.25", []scenario.CostOverride{
			{Host: "server", Op: "wakeup", Value: 2.5, Unit: "us", Source: "moved"},
			{Host: "client", Op: "syscall", Value: 125, Unit: "ns", Source: "moved"},
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Name).To(Equal(v.Name))
		Expect(d.File.Hosts["server"].Cost.Overrides).To(HaveLen(2))
		Expect(d.File.Hosts["server"].Cost.Overrides["syscall"].Value).To(Equal(90.0))
		Expect(d.File.Hosts["server"].Cost.Overrides["wakeup"].Value).To(Equal(2.5))
		Expect(d.File.Hosts["client"].Cost.Overrides["syscall"].Unit).To(Equal("ns"))
		Expect(d.Overrides).To(ContainElements("hosts.server.cost.overrides.wakeup", "hosts.client.cost.overrides.syscall"))
		Expect(v.File.Hosts["server"].Cost.Overrides).To(HaveLen(1), "the scenario's own variant is unchanged")
		Expect(v.File.Hosts["client"].Cost).To(BeNil())
	})

	It("names the derived variant in its errors", func() {
		s, err := scenario.Parse("t.yaml", []byte(base))
		Expect(err).NotTo(HaveOccurred())
		_, err = s.WithCostOverrides(s.Variants[0], "x up", []scenario.CostOverride{{Host: "nosuch", Op: "syscall", Value: 1, Unit: "ns", Source: "s"}})
		Expect(err).To(MatchError(ContainSubstring(`x up of variant default: no host "nosuch"`)))
	})
})
