package report_test

import (
	"bytes"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// summaryReport has expectations, reproduction rows, throughput and
// latency figures, and many other figures.
func summaryReport() *report.Report {
	a, b := report.Tree{}, report.Tree{}
	for i, t := range []report.Tree{a, b} {
		t.Set("wrk.rps", 1000+float64(i)*500.25)
		t.Set("wrk.latency.p99_us", 80)
		t.Set("wrk.latency.p50_us", 40)
		t.Set("wrk.status_5xx", 0)
		t.Set("web.cpu.all.busy_pct", 50)
		t.Set("web.cpu.0.ops.copy.ns", 7)
		t.Set("web.stack.0.tcp.conn_limit_refused", 1)
		t.Set("web.nic.eth0.ipackets", 123456)
	}
	return &report.Report{Savanna: "v", Scenario: "s", File: "s.yaml", Hash: "0123456789abcdef",
		Variants: []string{"kernel", "lstack"}, Figures: map[string]report.Tree{"kernel": a, "lstack": b},
		Expectations: []report.Expectation{
			{Expr: "lstack.web.cpu.all.busy_pct < 60", Held: true},
			{Expr: `kernel.web.stack["0"].tcp.conn_limit_refused >= 1 && lstack.wrk.status_5xx == 0`, Held: true},
			{Expr: "lstack.wrk.rps > kernel.wrk.rps * 2", Held: false, Detail: "left 1500.25, right 2000"},
		},
		Reproduction: []report.Reproduction{{Figure: "wrk req/s, Gazelle", Published: 359389.03, Savanna: 1500.25},
			{Figure: "missing", Published: 2, Err: "reproduction[1]: no such figure"}}}
}

var _ = Describe("the summary", func() {
	It("prints a published figure as the scenario writes it, in every format", func() {
		r := summaryReport()
		r.Reproduction = []report.Reproduction{{Figure: "P99 latency, kernel (ms)", Kind: "predicted", Published: 14.255, PublishedText: "14.255", Savanna: 12}}
		var table, md, html bytes.Buffer
		Expect(r.WriteTable(&table)).To(Succeed())
		Expect(r.WriteMarkdown(&md)).To(Succeed())
		Expect(r.WriteHTML(&html)).To(Succeed())
		Expect(table.String()).To(MatchRegexp(`P99 latency, kernel \(ms\)\s+14\.255\s+12\s+0\.8418\s+predicted\n`))
		Expect(md.String()).To(ContainSubstring("| P99 latency, kernel (ms) | predicted | 14.255 | 12 | 0.8418 |"))
		for _, out := range []string{table.String(), md.String(), html.String()} {
			Expect(out).To(ContainSubstring("14.255"))
			Expect(out).NotTo(ContainSubstring("14.26"), "the reports' number format would round it")
		}
	})

	It("comes first in the table: expectations, published figures, headline figures, then every figure", func() {
		var buf bytes.Buffer
		Expect(summaryReport().WriteTable(&buf)).To(Succeed())
		out := buf.String()
		order := []string{"SUMMARY", "expectations: 2 of 3 held", "\nFAIL  lstack.wrk.rps > kernel.wrk.rps * 2\n      left 1500.25, right 2000",
			"published figures", "wrk req/s, Gazelle    359" + nb + "389     1500  0.004174", "missing                     2        -         -",
			"headline figures", "ALL FIGURES (", "web.nic.eth0.ipackets"}
		at := -1
		for _, s := range order {
			i := strings.Index(out, s)
			Expect(i).To(BeNumerically(">", at), "%q comes after the one before it in:\n%s", s, out)
			at = i
		}
	})

	It("lists the figures the expectations name in their order, then throughput and latency, sorted", func() {
		var buf bytes.Buffer
		Expect(summaryReport().WriteTable(&buf)).To(Succeed())
		_, hl, _ := strings.Cut(buf.String(), "headline figures")
		hl, _, _ = strings.Cut(hl, "ALL FIGURES")
		var names []string
		for _, line := range strings.Split(hl, "\n")[2:] {
			if f := strings.Fields(line); len(f) > 0 {
				names = append(names, f[0])
			}
		}
		Expect(names).To(Equal([]string{"web.cpu.all.busy_pct", "web.stack.0.tcp.conn_limit_refused", "wrk.status_5xx", "wrk.rps",
			"wrk.latency.p50_us", "wrk.latency.p99_us"}))
		Expect(hl).To(MatchRegexp(`wrk\.rps\s+1000\s+1500\n`))
		Expect(hl).To(MatchRegexp(`wrk\.latency\.p99_us\s+80 µs\s+80 µs\n`))
	})

	It("comes first in Markdown and HTML too", func() {
		var md, page bytes.Buffer
		r := summaryReport()
		Expect(r.WriteMarkdown(&md)).To(Succeed())
		Expect(r.WriteHTML(&page)).To(Succeed())
		for _, c := range []struct {
			out   string
			order []string
		}{
			{md.String(), []string{"## Summary", "### Expectations: 2 of 3 held", "### Published figures", "| wrk req/s, Gazelle |  | 359" + nb + "389 | 1500 | 0.004174 |",
				"### Headline figures", "| `wrk.rps` | 1000 | 1500 |", "## All figures (8)"}},
			{page.String(), []string{`id="summary"`, "Expectations: 2 of 3 held", `id="published"`, `id="headline"`, `id="figures"`}},
		} {
			at := -1
			for _, s := range c.order {
				i := strings.Index(c.out, s)
				Expect(i).To(BeNumerically(">", at), "%q comes after the one before it in:\n%s", s, c.out)
				at = i
			}
		}
	})
})
