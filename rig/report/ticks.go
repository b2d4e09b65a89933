package report

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
)

// numTicks is gonum's default ticks on a linear axis, labelled by the
// report's number format (FormatNumber, or a unit's) instead of %g with
// trailing zeros.
type numTicks struct{ format func(float64) string }

// Ticks implements plot.Ticker.
func (t numTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.format(ticks[i].Value)
		}
	}
	return ticks
}

// logTicks marks a logarithmic axis where plot.LogTicks does, at every
// multiple of each power of ten, and labels enough of them to read (four
// at least): the powers of ten when the axis spans several decades, also 2 and 5 times
// them when it spans fewer, every multiple within one decade, and round
// values of a linear axis when even that gives fewer than three labels (a
// latency spread of 20 to 22 µs). plot.LogTicks alone labels only powers of ten,
// which leaves such an axis bare.
type logTicks struct{ format func(float64) string }

// Ticks implements plot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	// plot.LogTicks gives each power of ten twice, labelled and not.
	var ticks []plot.Tick
	for _, tk := range (plot.LogTicks{}).Ticks(lo, hi) {
		if len(ticks) == 0 || tk.Value != ticks[len(ticks)-1].Value {
			ticks = append(ticks, tk)
		}
	}
	inRange := func(v float64) bool { return v >= lo*(1-1e-9) && v <= hi*(1+1e-9) }
	mantissa := func(v float64) int {
		return int(math.Round(v / math.Pow10(int(math.Floor(math.Log10(v)+1e-9)))))
	}
	for _, labelled := range [][]int{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		n := 0
		for i := range ticks {
			ticks[i].Label = ""
			m := mantissa(ticks[i].Value)
			for _, l := range labelled {
				if m == l {
					ticks[i].Label = t.format(ticks[i].Value)
				}
			}
			if ticks[i].Label != "" && inRange(ticks[i].Value) {
				n++
			}
		}
		if n >= 4 {
			return ticks
		}
	}
	n := 0
	for _, tk := range ticks {
		if tk.Label != "" && inRange(tk.Value) {
			n++
		}
	}
	if n < 3 {
		// Within one decade the axis is near linear: round values from
		// the linear ticker read better than the axis' ends.
		return numTicks{t.format}.Ticks(lo, hi)
	}
	return ticks
}

// css is a colour as CSS writes it.
func css(c color.Color) string {
	r, g, b, a := c.RGBA()
	if a == 0xffff {
		return fmt.Sprintf("rgb(%d,%d,%d)", r>>8, g>>8, b>>8)
	}
	// RGBA is premultiplied; CSS wants the colour itself.
	return fmt.Sprintf("rgba(%d,%d,%d,%.2f)", r*0xffff/a>>8, g*0xffff/a>>8, b*0xffff/a>>8, float64(a)/0xffff)
}

// microAxis labels an axis in microseconds, secondsAxis one in
// seconds, with the unit's prefix.
func microAxis(v float64) string   { return unit{seconds, 1e-6}.format(v) }
func secondsAxis(v float64) string { return unit{seconds, 1}.format(v) }
