package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
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

// timePlots draws one SVG per plot title: a single chart of lines, or a
// grid of small panels with a shared title when the series have panels.
func (r *Report) timePlots() ([]string, error) {
	var out []string
	for _, g := range groupSeries(r.Series) {
		var (
			s   string
			err error
		)
		if len(g.panels) == 1 && g.panels[0] == "" {
			s, err = linesPlot(g.title, g.lines[""])
		} else {
			s, err = panelsPlot(g)
		}
		if err != nil {
			return nil, fmt.Errorf("plot %q: %w", g.title, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// newTimePlot is a plot with the axes every plot over time has.
func newTimePlot(title, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "simulated time (s)"
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	return p
}

// addLines adds a panel's series to p, as lines or as stacked areas,
// with legend entries when legend is set, coloured by colour (by
// position when it is nil).
func addLines(p *plot.Plot, series []Series, legend bool, colour func(line string) color.Color) error {
	sum := make([]float64, 0)
	var stackedLines []*plotter.Line
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
			return err
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
		if legend {
			p.Legend.Add(s.Line, l)
		}
	}
	// The highest stack is drawn first so that each lower one covers
	// its part of the area.
	for i := len(stackedLines) - 1; i >= 0; i-- {
		p.Add(stackedLines[i])
	}
	return nil
}

// fade returns c at 60% opacity for filled areas.
func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 153}
}

func linesPlot(title string, series []Series) (string, error) {
	p := newTimePlot(title, series[0].YLabel)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(-4)
	if err := addLines(p, series, true, nil); err != nil {
		return "", err
	}
	// Room above the lines for the legend.
	p.Y.Max = math.Max(p.Y.Max*(1.1+0.08*float64(len(series))), 1)
	return svg(p, 7, 3.5)
}

// panelsPlot draws a grid of panels, four to a row, with the same axes,
// the legend once above them.
func panelsPlot(g *seriesGroup) (string, error) {
	cols := min(4, len(g.panels))
	panelW, panelH := 2.25, 2.2
	if len(g.panels) > 8 {
		cols, panelW, panelH = 8, 1.6, 1.5
	}
	rows := (len(g.panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	yMax := 0.0
	legend, colour, entries := legendOf(g)
	for i, name := range g.panels {
		lines := g.lines[name]
		p := newTimePlot(name, lines[0].YLabel)
		p.Title.TextStyle.Font.Size = vg.Points(10)
		if i%cols != 0 {
			p.Y.Label.Text = ""
		}
		p.X.Label.Text = "simulated s"
		if i/cols != rows-1 {
			p.X.Label.Text = ""
		}
		if err := addLines(p, lines, false, colour); err != nil {
			return "", err
		}
		yMax = math.Max(yMax, p.Y.Max)
		if c := lines[0].Ceiling; c > 0 {
			yMax = math.Min(yMax, c)
		}
		grid[i/cols] = append(grid[i/cols], p)
	}
	// One scale for every panel, so panels compare at a glance.
	yMax = math.Max(yMax, 1)
	for i := range grid {
		for _, p := range grid[i] {
			p.Y.Max = yMax
		}
		for len(grid[i]) < cols {
			grid[i] = append(grid[i], nil)
		}
	}
	// The header holds the title and the legend, one entry per line.
	headIn := 0.35 + 0.2*float64(entries)
	wIn, hIn := panelW*float64(cols)+0.5, headIn+panelH*float64(rows)
	c := vgsvg.New(vg.Length(wIn)*vg.Inch, vg.Length(hIn)*vg.Inch)
	dc := draw.New(c)
	head := vg.Length(headIn) * vg.Inch
	title := plot.New()
	title.HideAxes()
	title.Title.Text = g.title
	title.Legend = legend
	title.Draw(draw.Crop(dc, 0, 0, dc.Max.Y-dc.Min.Y-head, 0))
	body := draw.Crop(dc, 0, 0, 0, -head)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
	canvases := plot.Align(grid, tiles, body)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	return svgText(c)
}

// legendOf is one legend entry per line name of the group, and the
// colour each name has in every panel.
func legendOf(g *seriesGroup) (plot.Legend, func(string) color.Color, int) {
	l := plot.NewLegend()
	l.Top = true
	l.TextStyle.Font.Size = vg.Points(10)
	l.Padding = vg.Points(3)
	index := map[string]int{}
	for _, name := range g.panels {
		for _, s := range g.lines[name] {
			if _, seen := index[s.Line]; seen {
				continue
			}
			index[s.Line] = len(index)
			sw, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
			sw.Color = palette(index[s.Line])
			sw.Width = vg.Points(4)
			l.Add(s.Line, sw)
		}
	}
	return l, func(line string) color.Color { return palette(index[line]) }, len(index)
}
