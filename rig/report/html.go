package report

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes report.html: the scenario, its expectations, plots
// (latency CDFs, CPU per host and variant, throughput, CPU per core, QAT
// instances, USDM memory and shim fallbacks over time) and every figure.
func (r *Report) WriteHTML(w io.Writer) error {
	lat, err := r.latencyPlot()
	if err != nil {
		return err
	}
	cpu, err := r.cpuPlot()
	if err != nil {
		return err
	}
	overTime, err := r.timePlots()
	if err != nil {
		return err
	}
	e := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s — Savanna</title>\n", e(r.Scenario))
	b.WriteString(`<style>body{font-family:sans-serif;max-width:70em;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:90%}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left;font-family:monospace}.pass{color:#0a0}.fail{color:#c00;font-weight:bold}
code{background:#f4f4f4}</style></head><body>` + "\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n", e(r.Scenario), e(strings.TrimSpace(r.Description)))
	if r.Reproduces != "" {
		fmt.Fprintf(&b, "<p><b>Reproduces:</b> %s</p>\n", e(strings.TrimSpace(r.Reproduces)))
	}
	fmt.Fprintf(&b, "<p>Seed %d, <code>%s</code> (sha256 %s), Savanna %s.</p>\n", r.Seed, e(r.File), e(r.Hash[:min(12, len(r.Hash))]), e(r.Savanna))
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "<p class=\"fail\">Incomplete: %s</p>\n", e(r.Incomplete))
	}
	if len(r.Expectations) > 0 {
		b.WriteString("<h2>Expectations</h2>\n<ul>\n")
		for _, x := range r.Expectations {
			cls, verdict := "pass", "PASS"
			if !x.Held {
				cls, verdict = "fail", "FAIL"
			}
			fmt.Fprintf(&b, "<li><span class=%q>%s</span> <code>%s</code>", cls, verdict, e(x.Expr))
			if !x.Held && x.Detail != "" {
				fmt.Fprintf(&b, "<br><small>%s</small>", e(x.Detail))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	if lat != "" || cpu != "" || len(overTime) > 0 {
		b.WriteString("<h2>Plots</h2>\n")
		for _, p := range append([]string{lat, cpu}, overTime...) {
			if p != "" {
				b.WriteString("<figure>" + p + "</figure>\n")
			}
		}
	}
	if len(r.Profiles) > 0 {
		b.WriteString("<h2>Where the CPU went</h2>\n<p>The simulated CPU profile of each host: every charge its cores took, by the layer that charged it and the cost operation (the figures HOST.cpu.*.ops and .layers; the folded stacks are in VARIANT.cpu.folded, for flamegraph.pl or speedscope).</p>\n")
		for _, p := range r.Profiles {
			if svg := flameSVG(p); svg != "" {
				b.WriteString("<figure>" + svg + "</figure>\n")
			}
		}
	}
	b.WriteString("<h2>Figures</h2>\n<table><tr><th>figure</th>")
	for _, v := range r.Variants {
		fmt.Fprintf(&b, "<th>%s</th>", e(v))
	}
	b.WriteString("</tr>\n")
	paths, cells := r.rows()
	for _, p := range paths {
		fmt.Fprintf(&b, "<tr><td>%s</td>", e(p))
		for _, c := range cells[p] {
			fmt.Fprintf(&b, "<td>%s</td>", e(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body></html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}
