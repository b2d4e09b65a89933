package report_test

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// filterReport is a report of two variants with a few figures at
// several depths.
func filterReport() *report.Report {
	a, b := report.Tree{}, report.Tree{}
	for _, t := range []report.Tree{a, b} {
		t.Set("pktgen.rtt.p99_us", 21)
		t.Set("pktgen.rtt.p50_us", 20)
		t.Set("pktgen.tx_pps", 1e6)
		t.Set("server.nic.eth0.imissed", 0)
		t.Set("server.nic.eth0.xstats.rx_q0_packets", 5)
		t.Set("server.cpu.3.busy_pct", 9)
	}
	return &report.Report{Savanna: "v", Scenario: "s", File: "s.yaml", Hash: "0123456789abcdef",
		Variants: []string{"kernel", "lstack"}, Figures: map[string]report.Tree{"kernel": a, "lstack": b}}
}

// printed is the full tree's rows of the table a filter prints.
func printed(globs ...string) ([]string, error) {
	f, err := report.NewFilter(globs)
	if err != nil {
		return nil, err
	}
	r, err := filterReport().WithFilter(f)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	Expect(r.WriteTable(&buf)).To(Succeed())
	_, all, ok := strings.Cut(buf.String(), "ALL FIGURES")
	Expect(ok).To(BeTrue())
	var rows []string
	for _, line := range strings.Split(all, "\n")[2:] {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f[0])
		}
	}
	return rows, nil
}

var _ = Describe("the figure filter", func() {
	DescribeTable("selects figures by globs over their dotted paths",
		func(globs []string, want []string) {
			rows, err := printed(globs...)
			Expect(err).NotTo(HaveOccurred())
			Expect(rows).To(Equal(want))
		},
		Entry("* stays within one name", []string{"pktgen.*"}, []string{"pktgen.tx_pps"}),
		Entry("** spans names", []string{"pktgen.**"}, []string{"pktgen.rtt.p50_us", "pktgen.rtt.p99_us", "pktgen.tx_pps"}),
		Entry("** matches no name too", []string{"**.tx_pps"}, []string{"pktgen.tx_pps"}),
		Entry("** in the middle", []string{"server.**.imissed"}, []string{"server.nic.eth0.imissed"}),
		Entry("? and classes, as path.Match", []string{"pktgen.rtt.p[5]?_us"}, []string{"pktgen.rtt.p50_us"}),
		Entry("the path may start with the variant, as expectations name it", []string{"lstack.pktgen.rtt.p99_us"}, []string{"pktgen.rtt.p99_us"}),
		Entry("several globs, and figures the unfiltered table hides (zeros, xstats, per-core)",
			[]string{"server.nic.**", "server.cpu.*.busy_pct"},
			[]string{"server.cpu.3.busy_pct", "server.nic.eth0.imissed", "server.nic.eth0.xstats.rx_q0_packets"}),
	)

	It("refuses a glob that matches no figure, naming it", func() {
		_, err := printed("pktgen.*", "pktgen.rx_ppz")
		Expect(err).To(MatchError(ContainSubstring(`--figures "pktgen.rx_ppz" matches no figure`)))
		_, err = printed("pktgen")
		Expect(err).To(MatchError(ContainSubstring(`"pktgen" matches no figure`)), "a glob matches whole paths, not prefixes")
	})

	It("refuses a malformed glob, naming it", func() {
		_, err := report.NewFilter([]string{"pktgen.[x"})
		Expect(err).To(MatchError(ContainSubstring(`figure glob "pktgen.[x"`)))
		_, err = report.NewFilter([]string{"pktgen..tx_pps"})
		Expect(err).To(MatchError(ContainSubstring("empty name")))
	})

	It("filters JSON and Markdown too, and leaves the report it came from whole", func() {
		f, err := report.NewFilter([]string{"**.p99_us"})
		Expect(err).NotTo(HaveOccurred())
		full := filterReport()
		r, err := full.WithFilter(f)
		Expect(err).NotTo(HaveOccurred())
		var js, md, whole bytes.Buffer
		Expect(r.WriteJSON(&js)).To(Succeed())
		Expect(js.String()).To(ContainSubstring(`"p99_us": 21`))
		Expect(js.String()).NotTo(ContainSubstring("p50_us"))
		Expect(r.WriteMarkdown(&md)).To(Succeed())
		Expect(md.String()).To(ContainSubstring("## All figures matching `**.p99_us` (1)"))
		Expect(full.WriteJSON(&whole)).To(Succeed())
		Expect(whole.String()).To(ContainSubstring("p50_us"))
	})
})

// FuzzFilter checks that no glob or path makes the filter panic.
func FuzzFilter(f *testing.F) {
	f.Add("pktgen.**", "pktgen.rtt.p99_us")
	f.Add("**.[a-", "a.b")
	f.Add("*.\\", "x.y")
	f.Fuzz(func(t *testing.T, glob, path string) {
		flt, err := report.NewFilter([]string{glob})
		if err != nil {
			return
		}
		flt.Match(path, []string{"default"})
	})
}
