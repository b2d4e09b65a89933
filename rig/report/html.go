package report

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// pageStyle lays report.html out for a window of 1280 px or less: text
// and tables in one column, plots scaled down to fit it, small multiples
// (a panel per core) in as many columns as fit, wide tables scrolled in
// their own box instead of widening the page.
const pageStyle = `<style>
body{font-family:sans-serif;max-width:72em;margin:2em auto;padding:0 1em;color:#222;line-height:1.35}
table{border-collapse:collapse;font-size:90%}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left;font-family:monospace}
td.text,th.text{text-align:left;font-family:sans-serif;white-space:normal}
.pass{color:#0a0}.fail{color:#c00;font-weight:bold}code{background:#f4f4f4}
.scroll{overflow-x:auto;max-width:100%}
figure{margin:1.6em 0}figcaption{font-weight:bold;margin-bottom:.25em;overflow-wrap:anywhere}
figure svg{display:block;max-width:100%;height:auto}
figure.plot:not(.panels)>svg{width:100%;max-width:52rem}
figure.flame>svg{max-width:100%}
.legend{display:flex;flex-wrap:wrap;gap:.2em 1.2em;font-size:90%;margin:.2em 0 .5em}
.legend i{display:inline-block;width:1.8em;height:.75em;margin-right:.4em;vertical-align:middle}
.axes{font-size:85%;color:#555;margin:.2em 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:4px 8px}
.panel svg{width:100%}.panel .cap{font-size:80%;text-align:center}
#figure-filter{width:24em;margin:.5em 0}
</style>`

// filterScript hides the figure table's rows whose name lacks the text
// typed into the box above it.
const filterScript = `<script>
document.getElementById("figure-filter").addEventListener("input", function (e) {
  var q = e.target.value.toLowerCase();
  document.querySelectorAll("#figures tr[data-f]").forEach(function (r) {
    r.style.display = r.dataset.f.toLowerCase().indexOf(q) >= 0 ? "" : "none";
  });
});
</script>`

// WriteHTML writes report.html: the scenario, its summary (expectations,
// published figures, headline figures), plots (latency CDFs, CPU per
// host and variant, throughput, CPU per core, QAT instances, USDM memory
// and shim fallbacks over time), flame graphs of the CPU profiles and
// every figure.
func (r *Report) WriteHTML(w io.Writer) error {
	var figs []plotFigure
	for _, draw := range []func() (*plotFigure, error){r.latencyPlot, r.cpuPlot} {
		f, err := draw()
		if err != nil {
			return err
		}
		if f != nil {
			figs = append(figs, *f)
		}
	}
	overTime, err := r.timePlots()
	if err != nil {
		return err
	}
	figs = append(figs, overTime...)
	e := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>%s — Savanna</title>\n", e(r.Scenario))
	b.WriteString(pageStyle + "</head><body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n", e(r.Scenario), e(strings.TrimSpace(r.Description)))
	if r.Reproduces != "" {
		fmt.Fprintf(&b, "<p><b>Reproduces:</b> %s</p>\n", e(strings.TrimSpace(r.Reproduces)))
	}
	fmt.Fprintf(&b, "<p>Seed %d, <code>%s</code> (sha256 %s), Savanna %s.</p>\n", r.Seed, e(r.File), e(r.Hash[:min(12, len(r.Hash))]), e(r.Savanna))
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "<p class=\"fail\">Incomplete: %s</p>\n", e(r.Incomplete))
	}
	r.writeHTMLSummary(&b)
	if len(figs) > 0 {
		b.WriteString("<h2 id=\"plots\">Plots</h2>\n")
		for _, f := range figs {
			f.writeHTML(&b)
		}
	}
	if len(r.Profiles) > 0 {
		b.WriteString("<h2 id=\"cpu\">Where the CPU went</h2>\n<p>The simulated CPU profile of each host: every charge its cores took, by the layer that charged it and the cost operation (the figures HOST.cpu.*.ops and .layers; the folded stacks are in VARIANT.cpu.folded, for flamegraph.pl or speedscope). Hover over a frame for its time.</p>\n")
		for _, p := range r.Profiles {
			if f := flameFigure(p); f != nil {
				f.writeHTML(&b)
			}
		}
	}
	rows := r.printedRows()
	fmt.Fprintf(&b, "<h2 id=\"figures\">All figures (%d)</h2>\n", len(rows))
	b.WriteString("<input id=\"figure-filter\" type=\"search\" placeholder=\"show figures whose name contains…\">\n")
	b.WriteString("<div class=\"scroll\"><table id=\"figures\">")
	writeHTMLRows(&b, r.Variants, rows, true)
	b.WriteString("</table></div>\n" + filterScript + "\n</body></html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// writeHTMLSummary writes the summary: expectations and their verdicts,
// the published figures beside Savanna's, and the headline figures.
func (r *Report) writeHTMLSummary(b *strings.Builder) {
	e := html.EscapeString
	b.WriteString("<h2 id=\"summary\">Summary</h2>\n")
	if len(r.Expectations) > 0 {
		fmt.Fprintf(b, "<h3>Expectations: %d of %d held</h3>\n<ul>\n", r.held(), len(r.Expectations))
		for _, x := range r.Expectations {
			fmt.Fprintf(b, "<li><span class=%q>%s</span> <code>%s</code>", strings.ToLower(x.verdict()), x.verdict(), e(x.Expr))
			if !x.Held && x.Detail != "" {
				fmt.Fprintf(b, "<br><small>%s</small>", e(x.Detail))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	if len(r.Reproduction) > 0 {
		b.WriteString("<h3>Published figures</h3>\n<div class=\"scroll\"><table id=\"published\"><tr><th>figure</th><th class=\"text\">kind</th><th>published</th><th>Savanna</th><th>ratio</th><th class=\"text\">note</th></tr>\n")
		for _, x := range r.Reproduction {
			note := x.Note
			if x.Err != "" {
				note = x.Err
			}
			fmt.Fprintf(b, "<tr><td class=\"text\">%s</td><td class=\"text\">%s</td><td>%s</td><td>%s</td><td>%s</td><td class=\"text\">%s</td></tr>\n",
				e(x.Figure), e(x.Kind), e(x.published()), e(x.savanna()), e(x.ratio()), e(strings.TrimSpace(note)))
		}
		b.WriteString("</table></div>\n")
	}
	if hl := r.headlineRows(); len(hl) > 0 {
		b.WriteString("<h3>Headline figures</h3>\n<p>The figures the expectations name, then each app's throughput and latency; every figure is <a href=\"#figures\">below</a>.</p>\n<div class=\"scroll\"><table id=\"headline\">")
		writeHTMLRows(b, r.Variants, hl, false)
		b.WriteString("</table></div>\n")
	}
}

// writeHTMLRows writes a figure table's header and rows; filterable rows
// carry their name for the page's filter box.
func writeHTMLRows(b *strings.Builder, variants []string, rows []row, filterable bool) {
	e := html.EscapeString
	b.WriteString("<tr><th>figure</th>")
	for _, v := range variants {
		fmt.Fprintf(b, "<th>%s</th>", e(v))
	}
	b.WriteString("</tr>\n")
	for _, w := range rows {
		if filterable {
			fmt.Fprintf(b, "<tr data-f=\"%s\"><td>%s</td>", e(w.path), e(w.path))
		} else {
			fmt.Fprintf(b, "<tr><td>%s</td>", e(w.path))
		}
		for _, c := range w.cells() {
			fmt.Fprintf(b, "<td>%s</td>", e(c))
		}
		b.WriteString("</tr>\n")
	}
}

// plotFigure is one plot of report.html. Its title and legend are HTML,
// outside the drawing, so that the browser wraps a long title to the
// page and no legend covers data.
type plotFigure struct {
	title  string
	legend []legendEntry
	// axes, when set, says what the panels' axes are (panels carry no
	// axis labels of their own).
	axes string
	// svg is a single drawing; panels are small multiples instead.
	svg    string
	panels []panel
	// logX marks a plot whose x axis is logarithmic.
	logX bool
	// collapsed folds a long grid of panels away until asked for.
	collapsed bool
	// flame marks a flame graph, drawn as wide as the page.
	flame bool
}

// legendEntry is a legend line: a name and its CSS colour.
type legendEntry struct{ name, colour string }

// panel is one small drawing of a grid, with its caption.
type panel struct{ caption, svg string }

func (f plotFigure) writeHTML(b *strings.Builder) {
	e := html.EscapeString
	class := "plot"
	if f.logX {
		class += " log-x"
	}
	if len(f.panels) > 0 {
		class += " panels"
	}
	if f.flame {
		class += " flame"
	}
	fmt.Fprintf(b, "<figure class=%q><figcaption>%s</figcaption>\n", class, e(f.title))
	if len(f.legend) > 0 {
		b.WriteString("<div class=\"legend\">")
		for _, l := range f.legend {
			fmt.Fprintf(b, "<span><i style=\"background:%s\"></i>%s</span>", l.colour, e(l.name))
		}
		b.WriteString("</div>\n")
	}
	if f.axes != "" {
		fmt.Fprintf(b, "<p class=\"axes\">%s</p>\n", e(f.axes))
	}
	if f.svg != "" {
		b.WriteString(f.svg + "\n")
	}
	if len(f.panels) > 0 {
		open := " open"
		if f.collapsed {
			open = ""
		}
		noun := "panels"
		if len(f.panels) == 1 {
			noun = "panel"
		}
		fmt.Fprintf(b, "<details%s><summary>%d %s</summary><div class=\"grid\">\n", open, len(f.panels), noun)
		for _, p := range f.panels {
			fmt.Fprintf(b, "<div class=\"panel\"><div class=\"cap\">%s</div>%s</div>\n", e(p.caption), p.svg)
		}
		b.WriteString("</div></details>\n")
	}
	b.WriteString("</figure>\n")
}
