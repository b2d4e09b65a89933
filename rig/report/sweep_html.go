package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"regexp"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// SweepPlot is one figure drawn against the grid: a line per variant
// through the medians, a bar over each grid point from the smallest to
// the largest seed's value.
type SweepPlot struct {
	// Figure is the figure's path within a variant.
	Figure string
	// File is its file name beside the report (sweep-FIGURE.svg).
	File string
	SVG  string
	// legend colours each variant's line.
	legend []legendEntry
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// medianErrors are a line's medians with their seeds' range, as gonum's
// error bars read them.
type medianErrors struct {
	plotter.XYs
	plotter.YErrors
}

// Plots draws every headline figure (headlinePaths) against the grid,
// in the order the table lists them; figures of several variants share
// a plot.
func (s *Sweep) Plots() ([]SweepPlot, error) {
	var order []string
	byFigure := map[string][]string{}
	for _, p := range s.headlinePaths() {
		_, rest, _ := strings.Cut(p, ".")
		if _, ok := byFigure[rest]; !ok {
			order = append(order, rest)
		}
		byFigure[rest] = append(byFigure[rest], p)
	}
	var out []SweepPlot
	for _, fig := range order {
		p := newPlot(s.axisName(), fig)
		p.Add(plotter.NewGrid())
		sp := SweepPlot{Figure: fig, File: "sweep-" + unsafeFileChars.ReplaceAllString(fig, "_") + ".svg"}
		for i, path := range byFigure[fig] {
			var pts medianErrors
			for g, c := range s.Figures[path] {
				if c.N == 0 {
					continue
				}
				pts.XYs = append(pts.XYs, plotter.XY{X: float64(g), Y: c.Median})
				pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{c.Median - c.Min, c.Max - c.Median})
			}
			if len(pts.XYs) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts.XYs)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", path, err)
			}
			l.Color, sc.Color = palette(i), palette(i)
			l.Width = vg.Points(1.5)
			eb, err := plotter.NewYErrorBars(pts)
			if err != nil {
				return nil, fmt.Errorf("plot %s: %w", path, err)
			}
			eb.Color = palette(i)
			p.Add(l, sc, eb)
			v, _, _ := strings.Cut(path, ".")
			sp.legend = append(sp.legend, legendEntry{v, css(l.Color)})
		}
		if len(sp.legend) == 0 {
			continue
		}
		// Room above and below the data, so that no point sits on the
		// frame.
		pad := (p.Y.Max - p.Y.Min) * 0.06
		if pad == 0 {
			pad = math.Max(math.Abs(p.Y.Max)*0.06, 1)
		}
		p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
		p.NominalX(s.Columns...)
		p.X.Min, p.X.Max = -0.5, float64(len(s.Columns))-0.5
		svgText, err := svg(p, 7, 3.5)
		if err != nil {
			return nil, err
		}
		sp.SVG = svgText
		out = append(out, sp)
	}
	return out, nil
}

// axisName names the plots' x axis: the swept keys.
func (s *Sweep) axisName() string {
	if len(s.Keys) == 0 {
		return "(seeds only)"
	}
	return strings.Join(s.Keys, ", ")
}

// WriteHTML writes the sweep's report.html: the grid, the expectations'
// outcomes and knees, a plot per headline figure and the figures' table.
func (s *Sweep) WriteHTML(w io.Writer) error {
	plots, err := s.Plots()
	if err != nil {
		return err
	}
	e := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Sweep of %s — Savanna</title>\n", e(s.Scenario))
	b.WriteString(pageStyle + "</head><body>\n")
	fmt.Fprintf(&b, "<h1>Sweep of %s</h1>\n<p>%s</p>\n", e(s.Scenario), e(strings.TrimSpace(s.Description)))
	fmt.Fprintf(&b, "<p>%d points (%d variant(s) × %d grid point(s) × %d seed(s)); <code>%s</code> (sha256 %s), Savanna %s.</p>\n<ul>\n",
		s.Points, len(s.Variants), s.GridPoints(), s.Seeds, e(s.File), e(s.Hash[:min(12, len(s.Hash))]), e(s.Savanna))
	for _, l := range s.gridLine() {
		fmt.Fprintf(&b, "<li>%s</li>\n", e(l))
	}
	b.WriteString("</ul>\n")
	if len(s.Expectations) > 0 {
		b.WriteString("<h2 id=\"expectations\">Expectations</h2>\n<p>Seeds for which each held, per grid point.</p>\n")
		writeHTMLGrid(&b, "expectations-table", s.expectationTable())
		if len(s.Keys) > 0 {
			fmt.Fprintf(&b, "<h2 id=\"knees\">Knees</h2>\n<p>A knee is %s.</p>\n<ul>\n", e(kneeRule))
			for _, x := range s.Expectations {
				fmt.Fprintf(&b, "<li><code>%s</code><ul>", e(x.Expr))
				for _, k := range x.Knees {
					fmt.Fprintf(&b, "<li>%s</li>", e(k.describe()))
				}
				b.WriteString("</ul></li>\n")
			}
			b.WriteString("</ul>\n")
		}
	}
	if len(plots) > 0 {
		b.WriteString("<h2 id=\"plots\">Plots</h2>\n")
		for _, p := range plots {
			f := plotFigure{title: p.Figure + " against " + s.axisName() + " (median; bars from the smallest to the largest seed's value)", legend: p.legend, svg: p.SVG}
			f.writeHTML(&b)
		}
	}
	paths := s.headlinePaths()
	fmt.Fprintf(&b, "<h2 id=\"figures\">Figures (%d of %d; the others are in --format json)</h2>\n", len(paths), len(s.Figures))
	writeHTMLGrid(&b, "figures", s.figureTable(paths))
	b.WriteString("</body></html>\n")
	_, err = io.WriteString(w, b.String())
	return err
}

// writeHTMLGrid writes a table of cells, its first row the header.
func writeHTMLGrid(b *strings.Builder, id string, t [][]string) {
	e := html.EscapeString
	fmt.Fprintf(b, "<div class=\"scroll\"><table id=%q>", id)
	for i, line := range t {
		b.WriteString("<tr>")
		for _, c := range line {
			if i == 0 {
				fmt.Fprintf(b, "<th>%s</th>", e(c))
			} else {
				fmt.Fprintf(b, "<td>%s</td>", e(c))
			}
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table></div>\n")
}
