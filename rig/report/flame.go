package report

import (
	"fmt"
	"hash/fnv"
	"html"
	"sort"
	"strings"
)

// Flame-graph geometry, in SVG pixels.
const (
	flameWidth   = 1000.0
	flameRow     = 18.0
	flameCharPx  = 7.0 // a 12 px sans-serif character, on average
	flameMinText = 3   // characters worth writing in a frame
)

// flameNode is a frame of the merged stacks and the time under it.
type flameNode struct {
	name     string
	ns       float64
	children []*flameNode
}

func (n *flameNode) child(name string) *flameNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	c := &flameNode{name: name}
	n.children = append(n.children, c)
	return c
}

func (n *flameNode) depth() int {
	d := 0
	for _, c := range n.children {
		d = max(d, c.depth())
	}
	return d + 1
}

// flameTree merges a profile's folded stacks into one tree, children in
// name order as flamegraph.pl sorts them.
func flameTree(p Profile) *flameNode {
	root := &flameNode{name: p.Host}
	for _, s := range p.Stacks {
		frames := strings.Split(s.Frames, ";")
		n := root
		n.ns += s.NS
		for _, f := range frames[1:] {
			n = n.child(f)
			n.ns += s.NS
		}
	}
	var sortAll func(n *flameNode)
	sortAll = func(n *flameNode) {
		sort.Slice(n.children, func(i, j int) bool { return n.children[i].name < n.children[j].name })
		for _, c := range n.children {
			sortAll(c)
		}
	}
	sortAll(root)
	return root
}

// flameFigure is a profile's flame graph with its title, for
// report.html.
func flameFigure(p Profile) *plotFigure {
	root := flameTree(p)
	if root.ns <= 0 {
		return nil
	}
	return &plotFigure{
		title: fmt.Sprintf("CPU profile: %s, host %s (%s busy over all its cores)", p.Variant, p.Host, formatNS(root.ns)),
		svg:   flameSVG(root),
		flame: true,
	}
}

// flameSVG draws a profile's merged stacks as a flame graph: the host at
// the bottom, the layers that charged its cores above it and their
// operations on top, each frame as wide as its share of the host's busy
// time. Hovering a frame shows its time and share. The viewBox lets the
// page scale it to its width.
func flameSVG(root *flameNode) string {
	rows := root.depth()
	height := float64(rows)*flameRow + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`, flameWidth, height, flameWidth, height)
	var draw func(n *flameNode, x float64, level int)
	draw = func(n *flameNode, x float64, level int) {
		w := flameWidth * n.ns / root.ns
		y := height - float64(level+1)*flameRow
		label := html.EscapeString(n.name)
		fmt.Fprintf(&b, `<g><title>%s: %s (%s)</title><rect x="%.2f" y="%.2f" width="%.2f" height="%.0f" fill="%s" stroke="white" stroke-width="0.5"/>`,
			label, formatNS(n.ns), FormatFigure("share_pct", 100*n.ns/root.ns), x, y, w, flameRow-1, flameColour(n.name))
		if chars := int((w - 6) / flameCharPx); chars >= flameMinText {
			text := n.name
			if len(text) > chars {
				text = text[:chars-2] + ".."
			}
			fmt.Fprintf(&b, `<text x="%.2f" y="%.2f">%s</text>`, x+3, y+flameRow-5, html.EscapeString(text))
		}
		b.WriteString("</g>")
		cx := x
		for _, c := range n.children {
			draw(c, cx, level+1)
			cx += flameWidth * c.ns / root.ns
		}
	}
	draw(root, 0, 0)
	b.WriteString("</svg>")
	return b.String()
}

// flameColour is a warm colour chosen by the frame's name, so that the
// same operation has the same colour in every graph of a report.
func flameColour(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+v%50, 80+(v>>8)%130, 40+(v>>16)%50)
}

// formatNS writes a duration given in nanoseconds by the report's
// number format.
func formatNS(ns float64) string { return unit{seconds, 1e-9}.format(ns) }
