package calibrate

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/sim/cost"
)

// Diff is one price in two cost files: the figure issue 18 asks of two
// calibrations of one machine ("each price within 5% between the two
// runs, or marked noisy with its spread").
type Diff struct {
	Op string
	// A and B are the two files' entries; InA and InB say whether the
	// file prices the op at all.
	A, B     cost.Entry
	InA, InB bool
	// Measured: at least one file measured the price on its machine
	// (the others keep a default, the same in both).
	Measured bool
	// Rel is (B - A) / A (0 when both are 0, +Inf when only A is).
	Rel float64
	// NoisyA and NoisyB: the file marked the price noisy; SpreadA and
	// SpreadB are the spreads its source gives (-1 when none).
	NoisyA, NoisyB   bool
	SpreadA, SpreadB float64
}

// Beyond reports whether the two values differ by more than limit.
func (d Diff) Beyond(limit float64) bool { return math.Abs(d.Rel) > limit }

// Unexplained reports whether the values differ by more than limit
// while neither file marked the price noisy: what a calibration that
// meets issue 18's rule must not show.
func (d Diff) Unexplained(limit float64) bool {
	return d.InA && d.InB && d.Measured && d.Beyond(limit) && !d.NoisyA && !d.NoisyB
}

// compareFile is what Compare reads of a cost file.
type compareFile struct {
	costs map[string]cost.Entry
	order []string
}

// readCompareFile reads a cost file's entries and their order without
// checking them against this build's operations, so that a file written
// by an older simrun (an op fewer or more) still compares.
func readCompareFile(name string, data []byte) (*compareFile, error) {
	var f cost.File
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if f.Version != cost.FormatVersion {
		return nil, fmt.Errorf("%s: version %d; this simrun reads cost files of version %d", name, f.Version, cost.FormatVersion)
	}
	if len(f.Costs) == 0 {
		return nil, fmt.Errorf("%s: no costs", name)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var order []string
	if len(doc.Content) == 1 {
		top := doc.Content[0]
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value == "costs" {
				c := top.Content[i+1]
				for j := 0; j+1 < len(c.Content); j += 2 {
					order = append(order, c.Content[j].Value)
				}
			}
		}
	}
	return &compareFile{costs: f.Costs, order: order}, nil
}

// Compare sets the prices of two cost files side by side, in A's order
// and then the ops only B has.
func Compare(nameA string, a []byte, nameB string, b []byte) ([]Diff, error) {
	fa, err := readCompareFile(nameA, a)
	if err != nil {
		return nil, err
	}
	fb, err := readCompareFile(nameB, b)
	if err != nil {
		return nil, err
	}
	order := append([]string(nil), fa.order...)
	for _, op := range fb.order {
		if _, ok := fa.costs[op]; !ok {
			order = append(order, op)
		}
	}
	diffs := make([]Diff, 0, len(order))
	for _, op := range order {
		ea, inA := fa.costs[op]
		eb, inB := fb.costs[op]
		d := Diff{Op: op, A: ea, B: eb, InA: inA, InB: inB,
			Measured: (inA && measuredSource(ea.Source)) || (inB && measuredSource(eb.Source))}
		d.NoisyA, d.SpreadA = noisySource(ea.Source)
		d.NoisyB, d.SpreadB = noisySource(eb.Source)
		if inA && inB {
			d.Rel = relDiff(entryNS(ea, defaultGHz), entryNS(eb, defaultGHz))
		}
		diffs = append(diffs, d)
	}
	return diffs, nil
}

// measuredSource reports whether a calibrated file's source says the
// price was measured (Map writes "simrun calibrate: ..." or, marked,
// "NOISY (...): simrun calibrate: ...").
func measuredSource(src string) bool {
	return strings.HasPrefix(src, "simrun calibrate:") || strings.HasPrefix(src, "NOISY (")
}

// noisyRE reads the spread a noisy price's source gives.
var noisyRE = regexp.MustCompile(`^NOISY \(largest spread ([0-9.]+)%`)

// noisySource reports whether the source marks the price noisy, and its
// spread (-1 when it gives none).
func noisySource(src string) (bool, float64) {
	m := noisyRE.FindStringSubmatch(src)
	if m == nil {
		return strings.HasPrefix(src, "NOISY"), -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return true, -1
	}
	return true, v / 100
}

func relDiff(a, b float64) float64 {
	switch {
	case a == b:
		return 0
	case a == 0:
		return math.Inf(1)
	}
	return (b - a) / math.Abs(a)
}

// CompareSummary counts what WriteCompare printed.
type CompareSummary struct {
	// Measured is the number of prices either file measured.
	Measured int
	// Within are those within the limit; Noisy those beyond it that a
	// file marked noisy; Unexplained those beyond it that neither did.
	Within, Noisy, Unexplained int
	// Missing are ops one file prices and the other does not.
	Missing int
}

// WriteCompare prints every measured price of the two files with both
// values, their difference and a flag when it is beyond limit, then the
// counts; with all, it prints the prices both files kept at a default
// too.
func WriteCompare(w io.Writer, nameA, nameB string, diffs []Diff, limit float64, all bool) (CompareSummary, error) {
	var sum CompareSummary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "A: %s\nB: %s\n\nprice\tA\tB\tunit\tB-A\t\n", nameA, nameB)
	spread := func(noisy bool, s float64) string {
		switch {
		case !noisy:
			return ""
		case s < 0:
			return "noisy"
		}
		return fmt.Sprintf("noisy %.1f%%", 100*s)
	}
	for _, d := range diffs {
		if !d.InA || !d.InB {
			sum.Missing++
			where := "B"
			if !d.InA {
				where = "A"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t\t\tnot in %s\n", d.Op, value(d.A, d.InA), value(d.B, d.InB), where)
			continue
		}
		if !d.Measured && !all {
			continue
		}
		flag := ""
		if d.Measured {
			sum.Measured++
			switch {
			case !d.Beyond(limit):
				sum.Within++
			case d.NoisyA || d.NoisyB:
				sum.Noisy++
				flag = fmt.Sprintf("beyond %.0f%%, marked noisy", 100*limit)
			default:
				sum.Unexplained++
				flag = fmt.Sprintf("BEYOND %.0f%%", 100*limit)
			}
		} else {
			flag = "default in both"
		}
		marks := strings.TrimSpace(strings.Join(nonEmpty("A "+spread(d.NoisyA, d.SpreadA), "B "+spread(d.NoisyB, d.SpreadB)), ", "))
		if marks != "" {
			flag = strings.TrimSpace(flag + " (" + marks + ")")
		}
		unit := d.A.Unit
		if d.A.Unit != d.B.Unit {
			unit = d.A.Unit + "/" + d.B.Unit
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Op, num(d.A.Value), num(d.B.Value), unit, pct(d.Rel), flag)
	}
	if err := tw.Flush(); err != nil {
		return sum, err
	}
	_, err := fmt.Fprintf(w, "\n%d measured prices: %d within %.0f%%, %d beyond it and marked noisy, %d beyond it unmarked; %d ops in one file only\n",
		sum.Measured, sum.Within, 100*limit, sum.Noisy, sum.Unexplained, sum.Missing)
	return sum, err
}

// nonEmpty keeps the marks that say something ("A " alone does not).
func nonEmpty(marks ...string) []string {
	var out []string
	for _, m := range marks {
		if len(strings.TrimSpace(m)) > 1 {
			out = append(out, m)
		}
	}
	return out
}

func value(e cost.Entry, in bool) string {
	if !in {
		return "-"
	}
	return num(e.Value)
}

func pct(r float64) string {
	if math.IsInf(r, 0) {
		return "inf"
	}
	return fmt.Sprintf("%+.1f%%", 100*r)
}
