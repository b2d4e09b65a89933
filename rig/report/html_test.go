package report_test

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/savanna-sim/savanna/rig/report"
)

// pageReport is a report with what made report.html hard to read: a
// latency spread within one decade on a log axis, a long plot title, a
// 32-core host's panels, a legend of many lines.
func pageReport(narrowOnly bool) *report.Report {
	r := filterReport()
	cdf := func(lo, hi float64) ([]float64, []float64) {
		var x, y []float64
		for i := 0; i <= 20; i++ {
			x = append(x, lo*math.Pow(hi/lo, float64(i)/20))
			y = append(y, float64(i)/20)
		}
		return x, y
	}
	nx, ny := cdf(20.1, 22.1)
	wx, wy := cdf(300, 15000)
	r.Latencies = []report.Distribution{{Variant: "kernel", App: "pktgen", LatencyUS: nx, Fraction: ny},
		{Variant: "lstack", App: "oltp_client", LatencyUS: wx, Fraction: wy}}
	if narrowOnly {
		r.Latencies = r.Latencies[:1]
	}
	t := []float64{0.01, 0.02, 0.03}
	title := "CPU per core over time: kernel_saturated, host a-rather-long-client-host-name (user and kernel time of each of its cores)"
	for c := 0; c < 32; c++ {
		for _, line := range []string{"user", "kernel"} {
			r.Series = append(r.Series, report.Series{Plot: title, YLabel: "% of the core", Panel: fmt.Sprintf("core %d", c),
				Line: line, Stacked: true, Ceiling: 100, TimeS: t, Values: []float64{10, 20, 30}})
		}
	}
	for i := 0; i < 8; i++ {
		r.Series = append(r.Series, report.Series{Plot: "Throughput over time (queries)", YLabel: "queries per second",
			Line: fmt.Sprintf("variant%d oltp_client", i), TimeS: t, Values: []float64{2.5e6, 2.4e6, 2.6e6}})
	}
	r.Profiles = []report.Profile{{Variant: "kernel", Host: "web", Stacks: []report.Stack{
		{Frames: "web;app;an_operation_with_a_long_name", NS: 1e6}, {Frames: "web;kernel;syscall", NS: 2.5e6}}}}
	return r
}

// node helpers over golang.org/x/net/html's tree.
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

func findAll(n *html.Node, keep func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && keep(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tag(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == name }
}

func content(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}

// px is an SVG length in CSS pixels (gonum writes points).
func px(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(s, "pt"), "px"), 64)
	Expect(err).NotTo(HaveOccurred(), s)
	if strings.HasSuffix(s, "pt") {
		return f * 4 / 3
	}
	return f
}

var fontSize = regexp.MustCompile(`font-size:\s*([0-9.]+)px`)

// textFits reports whether an SVG text element lies within its SVG's
// viewBox width, measured with gonum's metrics of the font it names.
func textFits(svg, t *html.Node) (bool, string) {
	vb := strings.Fields(attr(svg, "viewBox") + attr(svg, "viewbox"))
	Expect(vb).To(HaveLen(4))
	width, _ := strconv.ParseFloat(vb[2], 64)
	if strings.Contains(attr(t, "transform"), "rotate") {
		return true, ""
	}
	size := 12.0
	if m := fontSize.FindStringSubmatch(attr(t, "style")); m != nil {
		size, _ = strconv.ParseFloat(m[1], 64)
	}
	x, _ := strconv.ParseFloat(attr(t, "x"), 64)
	// Sizes and positions are in viewBox units, which gonum makes
	// points.
	sty := text.Style{Font: font.From(plot.DefaultFont, vg.Points(size)), Handler: plot.DefaultTextHandler}
	w := float64(sty.Width(content(t)))
	if attr(t, "text-anchor") == "middle" {
		x -= w / 2
	}
	return x >= -1 && x+w <= width+1, fmt.Sprintf("%q at x %.0f, about %.0f wide, in %.0f", content(t), x, w, width)
}

var tickLabel = regexp.MustCompile(`^-?[0-9][0-9.\x{202f}]*( ?(ns|µs|ms|s))?$`)

var _ = Describe("report.html", func() {
	var doc *html.Node
	var page string
	parse := func(narrowOnly bool) (*html.Node, string) {
		var buf bytes.Buffer
		Expect(pageReport(narrowOnly).WriteHTML(&buf)).To(Succeed())
		doc, err := html.Parse(strings.NewReader(buf.String()))
		Expect(err).NotTo(HaveOccurred())
		return doc, buf.String()
	}
	BeforeEach(func() { doc, page = parse(false) })

	It("gives every plot a title outside its drawing, where the page wraps it, and draws no text past a drawing's edge", func() {
		figs := findAll(doc, func(n *html.Node) bool { return n.Data == "figure" })
		Expect(len(figs)).To(BeNumerically(">=", 4), "latency, throughput, per-core panels, flame graph")
		for _, f := range figs {
			caps := findAll(f, tag("figcaption"))
			Expect(caps).To(HaveLen(1))
			Expect(content(caps[0])).NotTo(BeEmpty())
			for _, svg := range findAll(f, tag("svg")) {
				for _, t := range findAll(svg, tag("text")) {
					Expect(content(t)).NotTo(Equal(content(caps[0])), "the title is the caption's, not drawn again")
					ok, what := textFits(svg, t)
					Expect(ok).To(BeTrue(), "%s: %s", content(caps[0]), what)
				}
			}
		}
	})

	DescribeTable("labels the ticks of a log axis, even when the data span less than a decade",
		func(narrowOnly bool, atLeast int, want string) {
			doc, _ := parse(narrowOnly)
			logs := findAll(doc, func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "log-x") })
			Expect(logs).To(HaveLen(1))
			labels := map[string]bool{}
			for _, t := range findAll(logs[0], tag("text")) {
				if tickLabel.MatchString(content(t)) && strings.ContainsAny(content(t), "µms") {
					labels[content(t)] = true
				}
			}
			Expect(len(labels)).To(BeNumerically(">=", atLeast), "latency tick labels: %v", labels)
			if want != "" {
				Expect(labels).To(HaveKey(want))
			}
		},
		Entry("over decades: powers of ten", false, 3, "1 ms"),
		Entry("within one decade (20 to 22 µs)", true, 2, "22 µs"),
	)

	It("keeps legends out of the drawings and writes axes in the report's number format", func() {
		for _, f := range findAll(doc, func(n *html.Node) bool { return n.Data == "figure" && hasClass(n, "plot") }) {
			if len(findAll(f, func(n *html.Node) bool { return hasClass(n, "legend") })) == 0 {
				continue
			}
			for _, t := range findAll(f, tag("text")) {
				Expect(content(t)).NotTo(MatchRegexp(`^(user|kernel|variant\d)`), "a legend entry drawn inside the plot")
			}
		}
		Expect(page).To(ContainSubstring(">2" + nb + "500" + nb + "000</text>"))
		Expect(page).NotTo(MatchRegexp(`>[0-9]+\.00</text>|e\+0[0-9]`))
	})

	It("lays a 32-core host out as small panels that wrap in a 1280 px window", func() {
		grids := findAll(doc, func(n *html.Node) bool { return hasClass(n, "grid") })
		Expect(grids).To(HaveLen(1))
		panels := findAll(grids[0], func(n *html.Node) bool { return hasClass(n, "panel") })
		Expect(panels).To(HaveLen(32))
		for _, p := range panels {
			svgs := findAll(p, tag("svg"))
			Expect(svgs).To(HaveLen(1))
			Expect(px(attr(svgs[0], "width"))).To(BeNumerically("<=", 300))
		}
		Expect(page).To(ContainSubstring("grid-template-columns:repeat(auto-fill"))
		for _, svg := range findAll(doc, tag("svg")) {
			Expect(px(attr(svg, "width"))).To(BeNumerically("<=", 1100), "no drawing wider than the page's column")
		}
	})

	It("keeps the flame graph, scaled to the page", func() {
		Expect(page).To(ContainSubstring("CPU profile: kernel, host web (3.5 ms busy over all its cores)"))
		Expect(page).To(ContainSubstring("<title>syscall: 2.5 ms (71.43 %)</title>"))
		Expect(page).To(MatchRegexp(`<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="\d+" viewBox=`))
	})
})
