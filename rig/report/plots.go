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

// latencyPlot draws the CDFs of the report's distributions, one line per
// variant and app, with a logarithmic latency axis.
func (r *Report) latencyPlot() (string, error) {
	if len(r.Latencies) == 0 {
		return "", nil
	}
	p := plot.New()
	p.Title.Text = "Latency CDF per variant"
	p.X.Label.Text = "latency (µs, log scale)"
	p.Y.Label.Text = "fraction of requests at or below"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(-8)
	p.Y.Min, p.Y.Max = 0, 1
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
			return "", err
		}
		l.Color = palette(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(d.Variant+" "+d.App, l)
	}
	return svg(p, 7, 4)
}

// cpuPlot draws each host's CPU per variant: user and kernel time of
// all its cores, as shares of one core, stacked.
func (r *Report) cpuPlot() (string, error) {
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
			bars = append(bars, bar{label: v + "\n" + h, user: uf, kernel: kf})
		}
	}
	if len(bars) == 0 {
		return "", nil
	}
	users, kernels := make(plotter.Values, len(bars)), make(plotter.Values, len(bars))
	labels := make([]string, len(bars))
	for i, b := range bars {
		users[i], kernels[i], labels[i] = b.user, b.kernel, b.label
	}
	p := plot.New()
	p.Title.Text = "CPU busy per host and variant (average of its cores)"
	p.Y.Label.Text = "% of each core"
	w := vg.Points(18)
	ub, err := plotter.NewBarChart(users, w)
	if err != nil {
		return "", err
	}
	ub.Color = palette(0)
	kb, err := plotter.NewBarChart(kernels, w)
	if err != nil {
		return "", err
	}
	kb.Color = palette(1)
	kb.StackOn(ub)
	p.Add(ub, kb)
	p.Legend.Add("user", ub)
	p.Legend.Add("kernel", kb)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(8)
	p.Y.Max = math.Max(p.Y.Max*1.25, 10) // room for the legend
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.6, float64(len(bars))-0.4
	return svg(p, math.Max(7, float64(len(bars))*1.1), 4)
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
