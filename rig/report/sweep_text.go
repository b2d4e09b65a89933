package report

import (
	"fmt"
	"io"
	"strings"
)

// kneeRule is how the reports define a knee, said once in each.
const kneeRule = "the first value of a swept key, in the grid's order, at which the expectation's outcome for the majority of seeds (held for more than half) differs from its outcome at the key's first value"

// expectationTable is the expectations' outcomes, a row each: the seeds
// it held for at each grid point.
func (s *Sweep) expectationTable() [][]string {
	t := [][]string{append([]string{"expectation"}, s.Columns...)}
	for _, e := range s.Expectations {
		line := []string{e.Expr}
		for _, h := range e.Held {
			line = append(line, s.heldCell(h))
		}
		t = append(t, line)
	}
	return t
}

// figureTable is the headline figures, a row each, a column per grid
// point.
func (s *Sweep) figureTable(paths []string) [][]string {
	t := [][]string{append([]string{"figure"}, s.Columns...)}
	for _, p := range paths {
		line := []string{p}
		for _, c := range s.Figures[p] {
			line = append(line, c.cell(p))
		}
		t = append(t, line)
	}
	return t
}

// WriteTable writes the sweep's terminal report: the grid, each
// expectation's outcome per grid point and its knees, then the headline
// figures (those the expectations name, then throughput and latency;
// with a filter, those it selects) against the grid, each the median
// over seeds with their range.
func (s *Sweep) WriteTable(w io.Writer) error {
	fmt.Fprintln(w, s.header())
	if d := strings.TrimSpace(s.Description); d != "" {
		fmt.Fprintln(w, d)
	}
	fmt.Fprintln(w)
	for _, l := range s.gridLine() {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if len(s.Expectations) > 0 {
		fmt.Fprintf(w, "\nEXPECTATIONS (seeds for which each held, per grid point)\n")
		writeColumns(w, "  ", s.expectationTable())
		for _, e := range s.Expectations {
			for _, msg := range e.Errors {
				fmt.Fprintf(w, "  cannot be evaluated: %s: %s\n", e.Expr, msg)
			}
		}
		if len(s.Keys) > 0 {
			fmt.Fprintf(w, "\nKNEES (%s)\n", kneeRule)
			for _, e := range s.Expectations {
				fmt.Fprintf(w, "  %s\n", e.Expr)
				for _, k := range e.Knees {
					fmt.Fprintf(w, "      %s\n", k.describe())
				}
			}
		}
	}
	paths := s.headlinePaths()
	fmt.Fprintf(w, "\nFIGURES (%d of %d; median over seeds, [min–max] when they differ; --figures GLOB or --format json for the others)\n", len(paths), len(s.Figures))
	writeColumns(w, "  ", s.figureTable(paths))
	return nil
}

// WriteMarkdown writes the sweep's report as Markdown, with the same
// sections as the terminal report.
func (s *Sweep) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# Sweep of %s\n\n", s.Scenario)
	if d := strings.TrimSpace(s.Description); d != "" {
		fmt.Fprintf(w, "%s\n\n", d)
	}
	fmt.Fprintf(w, "%d points (%d variant(s) × %d grid point(s) × %d seed(s)); scenario `%s` (sha256 %s), Savanna %s.\n\n",
		s.Points, len(s.Variants), s.GridPoints(), s.Seeds, s.File, s.Hash[:min(12, len(s.Hash))], s.Savanna)
	for _, l := range s.gridLine() {
		fmt.Fprintf(w, "- %s\n", l)
	}
	fmt.Fprintln(w)
	if len(s.Expectations) > 0 {
		fmt.Fprintf(w, "## Expectations\n\nSeeds for which each held, per grid point.\n\n")
		writeMarkdownGrid(w, s.expectationTable(), true)
		fmt.Fprintln(w)
		for _, e := range s.Expectations {
			for _, msg := range e.Errors {
				fmt.Fprintf(w, "- cannot be evaluated: `%s`: %s\n", e.Expr, mdCell(msg))
			}
		}
		if len(s.Keys) > 0 {
			fmt.Fprintf(w, "## Knees\n\nA knee is %s.\n\n", kneeRule)
			for _, e := range s.Expectations {
				fmt.Fprintf(w, "- `%s`\n", e.Expr)
				for _, k := range e.Knees {
					fmt.Fprintf(w, "  - %s\n", k.describe())
				}
			}
			fmt.Fprintln(w)
		}
	}
	paths := s.headlinePaths()
	fmt.Fprintf(w, "## Figures\n\n%d of %d; the median over seeds, [min–max] when they differ.\n\n", len(paths), len(s.Figures))
	writeMarkdownGrid(w, s.figureTable(paths), true)
	return nil
}

// writeMarkdownGrid writes a table whose first column is code.
func writeMarkdownGrid(w io.Writer, t [][]string, code bool) {
	if len(t) == 0 {
		return
	}
	fmt.Fprintf(w, "| %s |\n|---|%s\n", strings.Join(mdCells(t[0]), " | "), strings.Repeat("---:|", len(t[0])-1))
	for _, line := range t[1:] {
		first := mdCell(line[0])
		if code {
			first = "`" + line[0] + "`"
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(append([]string{first}, mdCells(line[1:])...), " | "))
	}
}

func mdCells(cs []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = mdCell(c)
	}
	return out
}
