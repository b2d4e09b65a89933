package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Distribution is the latency distribution one app of one variant
// measured, as points of its CDF. It goes into report.html's plots, not
// into report.json.
type Distribution struct {
	Variant, App string
	// LatencyUS and Fraction are the CDF: the share of samples at or
	// below each latency, in microseconds.
	LatencyUS []float64
	Fraction  []float64
}

// palette returns distinguishable line colours (Okabe-Ito).
func palette(i int) color.Color {
	cs := []color.RGBA{
		{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
		{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
	}
	return cs[i%len(cs)]
}

// newPlot is a plot whose title and legend report.html writes itself
// (plotFigure), with axes labelled by the report's number format.
func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.X.Tick.Marker = numTicks{FormatNumber}
	p.Y.Tick.Marker = numTicks{FormatNumber}
	return p
}

// latencyPlot draws the CDFs of the report's distributions, one line per
// variant and app, with a logarithmic latency axis labelled in µs or ms.
func (r *Report) latencyPlot() (*plotFigure, error) {
	if len(r.Latencies) == 0 {
		return nil, nil
	}
	p := newPlot("latency (log scale)", "fraction of requests at or below")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{microAxis}
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	f := &plotFigure{title: "Latency CDF per variant", logX: true}
	for i, d := range r.Latencies {
		pts := make(plotter.XYs, 0, len(d.LatencyUS))
		for j, x := range d.LatencyUS {
			pts = append(pts, plotter.XY{X: math.Max(x, 0.01), Y: d.Fraction[j]})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = palette(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		f.legend = append(f.legend, legendEntry{d.Variant + " " + d.App, css(l.Color)})
	}
	if len(f.legend) == 0 {
		return nil, nil
	}
	s, err := svg(p, 7, 4)
	f.svg = s
	return f, err
}

// cpuPlot draws each host's CPU per variant: user and kernel time of
// all its cores, as shares of one core, stacked.
func (r *Report) cpuPlot() (*plotFigure, error) {
	type bar struct {
		label        string
		user, kernel float64
	}
	var bars []bar
	for _, v := range r.Variants {
		t := r.Figures[v]
		var hosts []string
		for h := range t {
			if _, ok := t.Lookup([]string{h, "cpu", "all", "busy_pct"}); ok {
				hosts = append(hosts, h)
			}
		}
		sort.Strings(hosts)
		for _, h := range hosts {
			u, _ := t.Lookup([]string{h, "cpu", "all", "user_pct"})
			k, _ := t.Lookup([]string{h, "cpu", "all", "kernel_pct"})
			uf, _ := u.(float64)
			kf, _ := k.(float64)
			bars = append(bars, bar{label: wrapName(v) + "\n" + wrapName(h), user: uf, kernel: kf})
		}
	}
	if len(bars) == 0 {
		return nil, nil
	}
	users, kernels := make(plotter.Values, len(bars)), make(plotter.Values, len(bars))
	labels := make([]string, len(bars))
	for i, b := range bars {
		users[i], kernels[i], labels[i] = b.user, b.kernel, b.label
	}
	p := newPlot("", "% of each core")
	w := vg.Points(18)
	ub, err := plotter.NewBarChart(users, w)
	if err != nil {
		return nil, err
	}
	ub.Color = palette(0)
	kb, err := plotter.NewBarChart(kernels, w)
	if err != nil {
		return nil, err
	}
	kb.Color = palette(1)
	kb.StackOn(ub)
	p.Add(ub, kb)
	p.Y.Max = math.Max(p.Y.Max*1.05, 10)
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(bars))-0.4
	// Each bar as wide as its longest label line, about 0.09 in a
	// character at the tick labels' 10 points.
	perBar := 1.1
	for _, l := range labels {
		for _, line := range strings.Split(l, "\n") {
			perBar = math.Max(perBar, 0.09*float64(len(line))+0.2)
		}
	}
	s, err := svg(p, math.Min(11, math.Max(7, float64(len(bars))*perBar)), 4)
	return &plotFigure{title: "CPU busy per host and variant (average of its cores)", svg: s,
		legend: []legendEntry{{"user", css(ub.Color)}, {"kernel", css(kb.Color)}}}, err
}

// wrapName breaks a variant's or host's name after underscores into
// lines of about 12 characters, so that bar labels side by side do not
// run into each other.
func wrapName(name string) string {
	var lines []string
	line := ""
	for _, part := range strings.SplitAfter(name, "_") {
		if line != "" && len(line)+len(part) > 12 {
			lines = append(lines, line)
			line = ""
		}
		line += part
	}
	return strings.Join(append(lines, line), "\n")
}

func svg(p *plot.Plot, wInch, hInch float64) (string, error) {
	c := vgsvg.New(vg.Length(wInch)*vg.Inch, vg.Length(hInch)*vg.Inch)
	p.Draw(draw.New(c))
	return svgText(c)
}

// svgText is a drawn canvas as an SVG element that can sit inside HTML.
func svgText(c *vgsvg.Canvas) (string, error) {
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("plot: %w", err)
	}
	s := b.String()
	// Drop the XML prolog so the SVG can sit inside HTML.
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s, nil
}
