package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Series is one line of a plot over simulated time, sampled at even
// steps of a variant's measured phase. Series go into report.html's
// plots, not into report.json.
type Series struct {
	// Plot is the title of the plot the line belongs to; lines of one
	// title share a plot.
	Plot   string
	YLabel string
	// Panel, when set, puts the line into a small panel of its own
	// within the plot (one per CPU core, say).
	Panel string
	// Line is the legend's name for the line.
	Line string
	// Stacked draws a panel's lines as areas stacked in order.
	Stacked bool
	// Ceiling, when set, is the highest value the axis shows (100 for a
	// share of a core, which sampling can overshoot: a turn's time counts
	// in the step in which the turn starts).
	Ceiling float64
	// TimeS are simulated seconds since the run began; Values are the
	// figures at those times.
	TimeS, Values []float64
}

// seriesGroup is the lines of one plot in the order they came.
type seriesGroup struct {
	title  string
	panels []string
	lines  map[string][]Series
}

// groupSeries groups series by plot, then by panel, keeping the order
// in which they were added so that reports are stable; plots of single
// charts, which compare variants, come before plots of panels, which
// show one variant each.
func groupSeries(all []Series) []*seriesGroup {
	var out []*seriesGroup
	byTitle := map[string]*seriesGroup{}
	for _, s := range all {
		g := byTitle[s.Plot]
		if g == nil {
			g = &seriesGroup{title: s.Plot, lines: map[string][]Series{}}
			byTitle[s.Plot] = g
			out = append(out, g)
		}
		if _, ok := g.lines[s.Panel]; !ok {
			g.panels = append(g.panels, s.Panel)
		}
		g.lines[s.Panel] = append(g.lines[s.Panel], s)
	}
	hasPanels := func(g *seriesGroup) bool { return g.panels[0] != "" }
	slices.SortStableFunc(out, func(a, b *seriesGroup) int {
		switch {
		case hasPanels(a) == hasPanels(b):
			return 0
		case hasPanels(a):
			return 1
		}
		return -1
	})
	return out
}

// timePlots draws one figure per plot title: a single chart of lines,
// or a grid of small panels with a shared legend when the series have
// panels.
func (r *Report) timePlots() ([]plotFigure, error) {
	var out []plotFigure
	for _, g := range groupSeries(r.Series) {
		var (
			f   plotFigure
			err error
		)
		if len(g.panels) == 1 && g.panels[0] == "" {
			f, err = linesPlot(g.title, g.lines[""])
		} else {
			f, err = panelsPlot(g)
		}
		if err != nil {
			return nil, fmt.Errorf("plot %q: %w", g.title, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// newTimePlot is a plot with the axes every plot over time has: time in
// s or ms, the figure from 0.
func newTimePlot(xLabel, yLabel string) *plot.Plot {
	p := newPlot(xLabel, yLabel)
	p.X.Tick.Marker = numTicks{secondsAxis}
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	return p
}

// addLines adds a panel's series to p, as lines or as stacked areas,
// coloured by colour (by position when it is nil), and returns their
// legend entries.
func addLines(p *plot.Plot, series []Series, colour func(line string) color.Color) ([]legendEntry, error) {
	sum := make([]float64, 0)
	var stackedLines []*plotter.Line
	var legend []legendEntry
	for i, s := range series {
		pts := make(plotter.XYs, len(s.TimeS))
		for j := range s.TimeS {
			y := s.Values[j]
			if s.Stacked {
				if len(sum) <= j {
					sum = append(sum, 0)
				}
				sum[j] += y
				y = sum[j]
			}
			pts[j] = plotter.XY{X: s.TimeS[j], Y: y}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = palette(i)
		if colour != nil {
			l.Color = colour(s.Line)
		}
		l.Width = vg.Points(1.2)
		if s.Stacked {
			l.FillColor = fade(l.Color)
			stackedLines = append(stackedLines, l)
		} else {
			p.Add(l)
		}
		legend = append(legend, legendEntry{s.Line, css(l.Color)})
	}
	// The highest stack is drawn first so that each lower one covers
	// its part of the area.
	for i := len(stackedLines) - 1; i >= 0; i-- {
		p.Add(stackedLines[i])
	}
	return legend, nil
}

// fade returns a light tint of c for filled areas: opaque, so that a
// stacked area shows its own colour, the legend's, and not a blend with
// the area behind it.
func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	tint := func(v uint32) uint8 { return uint8(255 - (255-v>>8)*6/10) }
	return color.RGBA{tint(r), tint(g), tint(b), 255}
}

func linesPlot(title string, series []Series) (plotFigure, error) {
	p := newTimePlot("simulated time", series[0].YLabel)
	legend, err := addLines(p, series, nil)
	if err != nil {
		return plotFigure{}, err
	}
	p.Y.Max = math.Max(p.Y.Max*1.05, 1)
	s, err := svg(p, 7, 3.5)
	return plotFigure{title: title, legend: legend, svg: s}, err
}

// Panels of a grid: small multiples, one SVG each, that the page lays
// out in as many columns as fit (CSS grid), so that a 96-core host
// wraps into rows instead of widening the page. Grids of more panels
// than panelsOpen (a 32-core host and its devices fit) start folded.
const (
	panelW, panelH = 2.2, 1.5 // inches
	panelsOpen     = 48
)

// panelsPlot draws a group's panels with one y scale, so that panels
// compare at a glance, and the legend once for all.
func panelsPlot(g *seriesGroup) (plotFigure, error) {
	f := plotFigure{title: g.title, collapsed: len(g.panels) > panelsOpen}
	colour, legend := legendOf(g)
	f.legend = legend
	yMax := 0.0
	plots := make([]*plot.Plot, len(g.panels))
	for i, name := range g.panels {
		lines := g.lines[name]
		p := newTimePlot("", "")
		p.X.Tick.Label.Font.Size = vg.Points(8)
		p.Y.Tick.Label.Font.Size = vg.Points(8)
		if _, err := addLines(p, lines, colour); err != nil {
			return plotFigure{}, err
		}
		yMax = math.Max(yMax, p.Y.Max)
		if c := lines[0].Ceiling; c > 0 {
			yMax = math.Min(yMax, c)
		}
		plots[i] = p
		if i == 0 {
			f.axes = "Each panel: " + lines[0].YLabel + " over simulated time, all on one scale."
		}
	}
	yMax = math.Max(yMax, 1)
	for i, p := range plots {
		p.Y.Max = yMax
		s, err := svg(p, panelW, panelH)
		if err != nil {
			return plotFigure{}, err
		}
		f.panels = append(f.panels, panel{caption: g.panels[i], svg: s})
	}
	return f, nil
}

// legendOf is one legend entry per line name of the group, and the
// colour each name has in every panel.
func legendOf(g *seriesGroup) (func(string) color.Color, []legendEntry) {
	index := map[string]int{}
	var legend []legendEntry
	for _, name := range g.panels {
		for _, s := range g.lines[name] {
			if _, seen := index[s.Line]; seen {
				continue
			}
			index[s.Line] = len(index)
			c := palette(index[s.Line])
			if s.Stacked {
				c = fade(c)
			}
			legend = append(legend, legendEntry{s.Line, css(c)})
		}
	}
	return func(line string) color.Color { return palette(index[line]) }, legend
}
