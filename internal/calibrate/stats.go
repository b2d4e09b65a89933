package calibrate

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Summary is what repeated runs of one benchmark gave.
type Summary struct {
	// Runs is the number of runs.
	Runs int
	// Median, Min and Max are over the runs' figures.
	Median, Min, Max float64
	// Q1 and Q3 are the first and third quartiles (linear interpolation
	// between order statistics, as R's type 7 and numpy's default).
	Q1, Q3 float64
}

// Spread is the robust relative spread, the interquartile range over
// the median ((Q3 - Q1) / median): the figure the noise rule compares
// with its threshold and a price's uncertainty is propagated from. A
// quartile is not moved by the most extreme quarter of the runs on
// either side, so one run that a neighbour's burst of load slowed (or a
// lucky quiet one) does not mark a steady benchmark noisy, as it would
// the range (max - min) / median; criterion.rs classifies outliers by
// the same quartile fences (Tukey's) and reports the median absolute
// deviation beside the median for the same reason (docs/calibration.md).
func (s Summary) Spread() float64 {
	if s.Median == 0 {
		if s.Q3 == s.Q1 {
			return 0
		}
		return math.Inf(1)
	}
	return (s.Q3 - s.Q1) / math.Abs(s.Median)
}

// Range is the relative range (max - min) / median, given beside the
// spread in a price's source.
func (s Summary) Range() float64 {
	if s.Median == 0 {
		if s.Max == s.Min {
			return 0
		}
		return math.Inf(1)
	}
	return (s.Max - s.Min) / math.Abs(s.Median)
}

// String is the summary as a source quotes it.
func (s Summary) String() string {
	return fmt.Sprintf("median %s over %d runs, spread %.1f%% (interquartile range %s to %s over the median), min %s, max %s (range %.1f%%)",
		num(s.Median), s.Runs, 100*s.Spread(), num(s.Q1), num(s.Q3), num(s.Min), num(s.Max), 100*s.Range())
}

// errNoSamples is returned for an empty sample set.
var errNoSamples = errors.New("no samples")

// Summarize computes the summary of samples (left unchanged).
func Summarize(samples []float64) (Summary, error) {
	if len(samples) == 0 {
		return Summary{}, errNoSamples
	}
	for _, v := range samples {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Summary{}, fmt.Errorf("sample %v is not a finite number", v)
		}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Summary{Runs: len(s), Median: quantile(s, 0.5), Min: s[0], Max: s[len(s)-1],
		Q1: quantile(s, 0.25), Q3: quantile(s, 0.75)}, nil
}

// quantile of sorted s at q in [0, 1], interpolating linearly.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (pos-float64(lo))*(s[hi]-s[lo])
}

// Line is a least-squares fit y = Intercept + Slope*x.
type Line struct {
	Intercept, Slope float64
	// R2 is the coefficient of determination (1 for a perfect fit).
	R2 float64
}

// FitLine fits a line through the points by ordinary least squares. It
// prices epoll_wait as a cost per call plus a cost per ready event from
// the medians at 0, 1, 16 and 64 ready descriptors.
func FitLine(xs, ys []float64) (Line, error) {
	if len(xs) != len(ys) {
		return Line{}, fmt.Errorf("fit: %d x values and %d y values", len(xs), len(ys))
	}
	if len(xs) < 2 {
		return Line{}, fmt.Errorf("fit: %d points; need 2 or more", len(xs))
	}
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxx, sxy, syy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return Line{}, errors.New("fit: every x is the same")
	}
	l := Line{Slope: sxy / sxx}
	l.Intercept = my - l.Slope*mx
	l.R2 = 1
	if syy > 0 {
		l.R2 = sxy * sxy / (sxx * syy)
	}
	return l, nil
}

// num formats a figure with four significant digits, no exponent for the
// magnitudes prices have.
func num(v float64) string {
	if v == 0 {
		return "0"
	}
	r := roundSig(v, 4)
	switch a := math.Abs(r); {
	case a >= 1000:
		return fmt.Sprintf("%.0f", r)
	case a >= 0.0001:
		return trimZeros(fmt.Sprintf("%.*f", max(0, 3-int(math.Floor(math.Log10(a)))), r))
	}
	return fmt.Sprintf("%.4g", r)
}

// roundSig rounds v to sig significant digits.
func roundSig(v float64, sig int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(sig-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func trimZeros(s string) string {
	if !containsDot(s) {
		return s
	}
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

func containsDot(s string) bool {
	for i := range len(s) {
		if s[i] == '.' {
			return true
		}
	}
	return false
}
