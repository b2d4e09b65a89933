package report

import (
	"math"
	"strconv"
	"strings"
)

// The one number format of every printed report (the terminal table,
// Markdown, report.html's tables and plot axes, docs/reproduction.md);
// report.json keeps the exact values. The rules:
//
//   - NaN and infinities print as NaN, +Inf and -Inf.
//   - A figure without a unit (a counter, a rate, a ratio) prints as
//     follows. Integers print exactly, in digits grouped by threes with a
//     narrow no-break space (U+202F) from five digits on (1000, 12 345,
//     1 155 700), as SI and ISO 80000 write numbers; other values round
//     to four significant figures (21.97, 0.5345, 0.00001235), but never
//     below the units digit, so 2500.5 prints 2501 and 1967276.6 prints
//     1 967 277.
//   - A figure whose name ends in a unit (_ns, _nanos, _us, _ms, _s,
//     _seconds, or is ns or seconds: time; bytes, or a bytes_ part
//     (sw_bytes_in): bytes; _pct: percent;
//     a name ending _per_s is a rate, not a time) is a measure: it
//     prints to four significant figures with an SI prefix chosen so that
//     the number is below 1000 (21.97 µs, 534.5 µs, 1.976 s, 15.86 MB,
//     decimal prefixes for bytes), and percent with a % sign.
//   - Magnitudes from 10^15 on, or below 10^-6 and not zero, which no
//     prefix above covers, print as a mantissa of four significant
//     figures times a power of ten written with superscripts
//     (1.235×10¹⁵): never Go's %g exponent (1.97587e+06).
//
// Plain digits would paste into expectations more easily; grouped ones
// are what a reader of a 7-digit counter needs, and the exact value is
// one --format json away.

// groupSep separates groups of three digits: a narrow no-break space,
// so that a number never breaks across lines in HTML, and one rune, so
// that a terminal table still aligns.
const groupSep = "\u202f"

// FormatNumber prints a figure without a unit by the report's number
// format (see the rules above).
func FormatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	a := math.Abs(v)
	switch {
	case a >= 1e15:
		return scientific(v)
	case v == math.Trunc(v):
		return groupDigits(int64(v))
	case a >= 999.95:
		// Four significant figures would drop units digits: round to
		// the whole number instead.
		return groupDigits(int64(math.Round(v)))
	case a < 1e-6:
		return scientific(v)
	}
	return significant(v)
}

// FormatFigure prints the figure at path (a dotted name) by the report's
// number format: with the unit its name ends in, if any.
func FormatFigure(path string, v float64) string {
	return unitOf(path).format(v)
}

// unit is what a figure measures, read off the end of its name.
type unit struct {
	kind unitKind
	// toBase converts the figure to the unit's base (seconds for a
	// figure in microseconds: 1e-6).
	toBase float64
}

type unitKind int

const (
	noUnit unitKind = iota
	seconds
	bytesUnit
	percent
)

// unitOf reads a figure's unit off its last name: the project's figures
// name their unit as a suffix (p99_us, busy_ns, rx_bytes, ibytes,
// busy_pct) or are the unit itself (ops.nic_rx_burst.ns, sim.seconds).
func unitOf(path string) unit {
	leaf := path[strings.LastIndexByte(path, '.')+1:]
	// A rate per second ends in _s too, but is not a time.
	if strings.HasSuffix(leaf, "_per_s") {
		return unit{}
	}
	if strings.HasSuffix(leaf, "bytes") || strings.Contains(leaf, "_bytes_") || strings.HasPrefix(leaf, "bytes_") {
		return unit{bytesUnit, 1}
	}
	for _, s := range []struct {
		name string
		u    unit
	}{
		{"ns", unit{seconds, 1e-9}}, {"nanos", unit{seconds, 1e-9}},
		{"us", unit{seconds, 1e-6}}, {"ms", unit{seconds, 1e-3}},
		{"seconds", unit{seconds, 1}}, {"s", unit{seconds, 1}},
		{"pct", unit{percent, 1}},
	} {
		if leaf == s.name && s.name != "s" || strings.HasSuffix(leaf, "_"+s.name) {
			return s.u
		}
	}
	return unit{}
}

// prefix is an SI prefix and the factor it stands for.
type prefix struct {
	factor float64
	symbol string
}

var (
	timePrefixes = []prefix{{1e-12, "p"}, {1e-9, "n"}, {1e-6, "µ"}, {1e-3, "m"}, {1, ""}}
	bytePrefixes = []prefix{{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"}, {1e15, "P"}}
)

func (u unit) format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return FormatNumber(v)
	}
	switch u.kind {
	case seconds:
		return withPrefix(v*u.toBase, timePrefixes, "s")
	case bytesUnit:
		return withPrefix(v, bytePrefixes, "B")
	case percent:
		return FormatNumber(v) + " %"
	}
	return FormatNumber(v)
}

// withPrefix prints v (in the base unit) with the largest prefix that
// keeps the number at 1 or above, to four significant figures; past the
// largest prefix the number grows, below the smallest it goes
// scientific.
func withPrefix(v float64, ps []prefix, base string) string {
	a := math.Abs(v)
	if a == 0 {
		return "0 " + base
	}
	if a < ps[0].factor {
		return scientific(v) + " " + base
	}
	p := ps[0]
	for _, q := range ps[1:] {
		// Rounded to four figures, 999.96 µs is 1 ms.
		if a >= q.factor*0.99995 {
			p = q
		}
	}
	m := v / p.factor
	var s string
	if math.Abs(m) >= 999.95 {
		s = groupDigits(int64(math.Round(m)))
	} else {
		s = significant(m)
	}
	return s + " " + p.symbol + base
}

// significant prints v to four significant figures in fixed notation,
// without trailing zeros. v is not zero and below 10^15.
func significant(v float64) string {
	decimals := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	if decimals < 0 {
		decimals = 0
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// groupDigits prints an integer in digits grouped by threes, from five
// digits on.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	if len(s) <= 4 {
		return sign + s
	}
	var b strings.Builder
	b.WriteString(sign)
	head := len(s) % 3
	if head == 0 {
		head = 3
	}
	b.WriteString(s[:head])
	for i := head; i < len(s); i += 3 {
		b.WriteString(groupSep)
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// scientific prints v as a four-figure mantissa times a power of ten in
// superscript digits.
func scientific(v float64) string {
	// strconv rounds the mantissa and finds the exponent exactly, down
	// to subnormal numbers that math.Pow10 cannot reach.
	m, e, _ := strings.Cut(strconv.FormatFloat(v, 'e', 3, 64), "e")
	exp, _ := strconv.Atoi(e)
	m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
	return m + "×10" + superscript(exp)
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	sup := []rune(digits)
	var b strings.Builder
	if n < 0 {
		b.WriteRune('⁻')
		n = -n
	}
	for _, c := range strconv.Itoa(n) {
		b.WriteRune(sup[c-'0'])
	}
	return b.String()
}
