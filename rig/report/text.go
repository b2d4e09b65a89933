package report

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// perCoreDetail matches a core's figures by operation, layer and app
// phase, which the terminal table leaves to the host's roll-up.
var perCoreDetail = regexp.MustCompile(`\.cpu\.[0-9]+\.(ops|layers|during)\.`)

// hiddenInTable reports whether the terminal table leaves a row out
// when no filter asks for it: like nstat, figures that are zero in every
// variant; xstats, which repeat the basic counters by their driver
// names; and each core's breakdown, which the host's cpu.all rows sum.
func hiddenInTable(w row) bool {
	return w.allZero() || strings.Contains(w.path, ".xstats.") || perCoreDetail.MatchString(w.path)
}

// WriteTable writes a terminal report: the summary (expectations and
// their verdicts, the published figures the scenario reproduces, the
// headline figures by variant), then every figure, one row per figure
// and one column per variant. Without a filter the full table leaves
// out what hiddenInTable says; with one it shows every figure the
// filter selects. JSON and Markdown carry all.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "scenario %s (seed %d, savanna %s)\n", r.Scenario, r.Seed, r.Savanna)
	if r.Incomplete != "" {
		fmt.Fprintf(w, "INCOMPLETE (%s)\n", r.Incomplete)
	}
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintf(w, "\nSUMMARY\n")
	if len(r.Expectations) > 0 {
		fmt.Fprintf(w, "\nexpectations: %d of %d held\n", r.held(), len(r.Expectations))
		r.writeExpectations(w, "", false)
	}
	if len(r.Reproduction) > 0 {
		fmt.Fprintf(w, "\npublished figures (the scenario's reproduction rows):\n")
		t := [][]string{{"figure", "published", "Savanna", "ratio", "kind"}}
		for _, x := range r.Reproduction {
			t = append(t, []string{x.Figure, x.published(), x.savanna(), x.ratio(), x.Kind})
		}
		writeColumns(w, "  ", t)
	}
	if hl := r.headlineRows(); len(hl) > 0 {
		fmt.Fprintf(w, "\nheadline figures (those the expectations name, then throughput and latency):\n")
		writeColumns(w, "  ", r.table(hl))
	}
	shown, hidden := r.tableRows()
	fmt.Fprintf(w, "\nALL FIGURES")
	if r.filter != nil {
		fmt.Fprintf(w, " matching --figures %s", strings.Join(r.filter.Globs(), " "))
	}
	fmt.Fprintf(w, " (%d)\n", len(shown))
	writeColumns(w, "  ", r.table(shown))
	if hidden > 0 {
		fmt.Fprintf(w, "(%d figures that are zero everywhere, xstats and per-core detail not shown: --figures GLOB or --format json shows them)\n", hidden)
	}
	return nil
}

// tableRows is the rows the terminal table's full tree shows and how
// many it leaves out.
func (r *Report) tableRows() (shown []row, hidden int) {
	for _, w := range r.printedRows() {
		if r.filter == nil && hiddenInTable(w) {
			hidden++
			continue
		}
		shown = append(shown, w)
	}
	return shown, hidden
}

// table is rows as a header and cells.
func (r *Report) table(rows []row) [][]string {
	t := [][]string{append([]string{"figure"}, r.Variants...)}
	for _, w := range rows {
		t = append(t, append([]string{w.path}, w.cells()...))
	}
	return t
}

// writeColumns writes a table aligned in columns: the first left, the
// others right, as numbers read.
func writeColumns(w io.Writer, indent string, t [][]string) {
	var widths []int
	for _, line := range t {
		for i, c := range line {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, line := range t {
		b.WriteString(indent)
		for i, c := range line {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
	io.WriteString(w, b.String())
}

// WriteMarkdown writes the report as Markdown: the summary, then every
// figure (those the filter selects, with one).
func (r *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# %s\n\n", r.Scenario)
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(r.Description))
	}
	if r.Reproduces != "" {
		fmt.Fprintf(w, "Reproduces: %s\n\n", strings.TrimSpace(r.Reproduces))
	}
	fmt.Fprintf(w, "Seed %d, scenario `%s` (sha256 %s), Savanna %s.\n\n", r.Seed, r.File, r.Hash[:min(12, len(r.Hash))], r.Savanna)
	if r.Incomplete != "" {
		fmt.Fprintf(w, "**Incomplete:** %s\n\n", r.Incomplete)
	}
	fmt.Fprintf(w, "## Summary\n\n")
	if len(r.Expectations) > 0 {
		fmt.Fprintf(w, "### Expectations: %d of %d held\n\n", r.held(), len(r.Expectations))
		r.writeExpectations(w, "", true)
		fmt.Fprintln(w)
	}
	if len(r.Reproduction) > 0 {
		fmt.Fprintf(w, "### Published figures\n\n| figure | kind | published | Savanna | ratio |\n|---|---|---:|---:|---:|\n")
		for _, x := range r.Reproduction {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", mdCell(x.Figure), x.Kind, x.published(), x.savanna(), x.ratio())
		}
		fmt.Fprintln(w)
	}
	if hl := r.headlineRows(); len(hl) > 0 {
		fmt.Fprintf(w, "### Headline figures\n\nThe figures the expectations name, then each app's throughput and latency.\n\n")
		r.writeMarkdownTable(w, hl)
		fmt.Fprintln(w)
	}
	rows := r.printedRows()
	fmt.Fprintf(w, "## All figures")
	if r.filter != nil {
		fmt.Fprintf(w, " matching `%s`", strings.Join(r.filter.Globs(), " "))
	}
	fmt.Fprintf(w, " (%d)\n\n", len(rows))
	r.writeMarkdownTable(w, rows)
	return nil
}

func (r *Report) writeMarkdownTable(w io.Writer, rows []row) {
	fmt.Fprintf(w, "| figure | %s |\n|---|%s\n", strings.Join(r.Variants, " | "), strings.Repeat("---:|", len(r.Variants)))
	for _, x := range rows {
		fmt.Fprintf(w, "| `%s` | %s |\n", x.path, strings.Join(x.cells(), " | "))
	}
}

// mdCell escapes a Markdown table cell's pipes.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// writeExpectations writes one line per expectation, its verdict first;
// a failed one's detail (the values of both sides) follows indented, or
// for Markdown after a line break within the list item.
func (r *Report) writeExpectations(w io.Writer, indent string, markdown bool) {
	for _, e := range r.Expectations {
		if markdown {
			fmt.Fprintf(w, "- %s  `%s`", e.verdict(), e.Expr)
			if !e.Held && e.Detail != "" {
				fmt.Fprintf(w, "<br>\n  %s", e.Detail)
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(w, "%s%s  %s\n", indent, e.verdict(), e.Expr)
		if !e.Held && e.Detail != "" {
			fmt.Fprintf(w, "%s      %s\n", indent, e.Detail)
		}
	}
}
