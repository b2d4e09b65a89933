package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/costops"
)

// The kinds of a reproduction row (docs/scenarios.md, "reproduction"):
// what a reader may conclude from the row's agreement with the article.
const (
	// KindPredicted is a figure that follows from the frozen machine
	// costs and the scenario's shape, tuned to nothing it is compared
	// with: the only kind whose agreement tests the model.
	KindPredicted = "predicted"
	// KindDeclared is an input taken from the article, a calibration
	// point; the note says what was set to meet it.
	KindDeclared = "declared"
	// KindDerived follows from other rows (Little's law on a closed loop,
	// a ratio of two rows); the note names them.
	KindDerived = "derived"
)

// RowKinds returns the kinds a reproduction row may have, in the order
// the errors list them.
func RowKinds() []string { return []string{KindPredicted, KindDeclared, KindDerived} }

// Published is a figure as the article prints it: Text is the scalar
// exactly as the scenario writes it (14.255 stays 14.255, never 14.26),
// Value the number it denotes, for the ratio.
type Published struct {
	Text  string
	Value float64
}

// UnmarshalYAML keeps the scalar's text beside its value, so that the
// report quotes the article rather than Savanna's number format.
func (p *Published) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return fmt.Errorf("expected the article's figure as a number, such as 14.255")
	}
	// yaml.v3 reads 1_000 and 0x10 as numbers; a published figure is
	// written as the article prints it, in decimal.
	v, err := strconv.ParseFloat(strings.TrimPrefix(n.Value, "+"), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("expected the article's figure as a decimal number such as 14.255 or 132402.98, found %q", n.Value)
	}
	p.Text, p.Value = n.Value, v
	return nil
}

// String is the figure as written.
func (p Published) String() string { return p.Text }

// validateReproduction checks the reproduction rows: every row names its
// figure, kind, published value and expression; sensitivity is a
// predicted row's only, and names cost ops of the run's table.
func validateReproduction(doc *yaml.Node, f *File, errAt errAtFunc) error {
	var ops map[string]bool
	for i, x := range f.Reproduction {
		rk := fmt.Sprintf("reproduction[%d]", i)
		if strings.TrimSpace(x.Figure) == "" {
			return errAt(rk+".figure", "figure is required: the published figure's name, such as \"Redis SET, Gazelle (req/s)\"")
		}
		switch x.Kind {
		case KindPredicted, KindDeclared, KindDerived:
		case "":
			return errAt(rk+".kind", "kind is required: predicted (follows from the frozen costs and the scenario's shape), declared (an input taken from the article; the note says what was set to meet it) or derived (follows from other rows; the note names them)")
		default:
			return errAt(rk+".kind", "kind %q; expected one of %s", x.Kind, strings.Join(RowKinds(), ", "))
		}
		if !present(doc, rk+".published") {
			return errAt(rk+".published", "published is required: the article's figure as it prints it")
		}
		if strings.TrimSpace(x.Savanna) == "" {
			return errAt(rk+".savanna", "savanna is required: an expression over the scenario's figures, as in expect")
		}
		if x.Sensitivity == nil {
			if present(doc, rk+".sensitivity") {
				return errAt(rk+".sensitivity", "empty; name the cost ops the row is most exposed to, or leave the key out")
			}
			continue
		}
		if x.Kind != KindPredicted {
			return errAt(rk+".sensitivity", "sensitivity is for predicted rows only: a %s row does not follow from the costs' uncertainty", x.Kind)
		}
		if len(x.Sensitivity) == 0 {
			return errAt(rk+".sensitivity", "empty; name the cost ops the row is most exposed to, or leave the key out")
		}
		if ops == nil {
			ops = map[string]bool{}
			for _, o := range costops.Table().Ops() {
				ops[o.Key] = true
			}
		}
		for j, op := range x.Sensitivity {
			sk := fmt.Sprintf("%s.sensitivity[%d]", rk, j)
			if !ops[op] {
				return errAt(sk, "unknown cost op %q; the ops are the keys of sim/cost/data/default.yaml (docs/cost-model.md)", op)
			}
			for jj := range j {
				if x.Sensitivity[jj] == op {
					return errAt(sk, "op %q given twice (also sensitivity[%d])", op, jj)
				}
			}
		}
	}
	return nil
}
