package main

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/expect"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim/cost"
)

// digestDigits is how much of a cost file's SHA-256 the table prints:
// enough to tell two files apart, short enough for a column.
const digestDigits = 12

// variantCosts are the cost models of every host of every variant of s,
// in the order of s.Variants, as a run builds them.
func variantCosts(s *scenario.Scenario) ([]map[string]*cost.Model, error) {
	out := make([]map[string]*cost.Model, len(s.Variants))
	for i, v := range s.Variants {
		m, err := rig.HostCosts(s, v)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// costUse is one cost model a scenario's figures came from, with the
// hosts it prices.
type costUse struct {
	model, digest string
	hosts         []string
}

// costUses groups a scenario's hosts by the model that prices them, in
// the order of the sorted host names. A host whose scenario overrides
// some prices says how many; one whose model differs between variants
// is listed per variant.
func costUses(s *scenario.Scenario, models []map[string]*cost.Model) []costUse {
	var out []costUse
	add := func(m *cost.Model, label string) {
		name, digest := m.Name(), m.Digest()
		if len(digest) > digestDigits {
			digest = digest[:digestDigits]
		}
		for i := range out {
			if out[i].model == name && out[i].digest == digest {
				out[i].hosts = append(out[i].hosts, label)
				return
			}
		}
		out = append(out, costUse{model: name, digest: digest, hosts: []string{label}})
	}
	for _, h := range s.File.HostNames() {
		type use struct {
			m *cost.Model
			n int
		}
		uses := make([]use, len(s.Variants))
		same := true
		for vi, v := range s.Variants {
			uses[vi] = use{models[vi][h], overrideCount(v, h)}
			if vi > 0 && (uses[vi].m.Digest() != uses[0].m.Digest() || uses[vi].m.Name() != uses[0].m.Name() || uses[vi].n != uses[0].n) {
				same = false
			}
		}
		for vi, u := range uses {
			label := h
			if !same {
				label += " in " + s.Variants[vi].Name
			}
			if u.n > 0 {
				label += fmt.Sprintf(" (with %d override%s)", u.n, map[bool]string{true: "", false: "s"}[u.n == 1])
			}
			add(u.m, label)
			if same {
				break
			}
		}
	}
	return out
}

// overrideCount is how many prices variant v overrides on host h.
func overrideCount(v *scenario.Variant, h string) int {
	if hc := v.File.Hosts[h]; hc != nil && hc.Cost != nil {
		return len(hc.Cost.Overrides)
	}
	return 0
}

// perturbation is one cost op moved by its uncertainty, in one
// direction, on every host of the variants that the rows naming the op
// read: one run per such variant, so that a row over several variants
// sees them all moved.
type perturbation struct {
	op     string
	factor string
	// variants are indices into the scenario's variants, runs[i] the
	// run of variants[i].
	variants []int
	runs     []rig.VariantRun
	// first is the index of runs[0] among all the runs pooled.
	first int
}

// rowVariants are the indices of the variants a row's expression reads:
// those without whose figures it cannot be evaluated. Only they need
// rerunning when a price moves; the others keep the run's figures.
func rowVariants(s *scenario.Scenario, expr string, figs map[string]report.Tree) []int {
	var out []int
	for vi, v := range s.Variants {
		env := make(map[string]report.Tree, len(figs))
		for name, t := range figs {
			if name != v.Name {
				env[name] = t
			}
		}
		if _, err := expect.Value(expr, env); err != nil {
			out = append(out, vi)
		}
	}
	return out
}

// sensitivityOps are the ops s's predicted rows name, in the order
// first named, each with the variants (indices, ascending) the rows
// naming it read.
func sensitivityOps(s *scenario.Scenario, figs map[string]report.Tree) ([]string, map[string][]int) {
	var ops []string
	reads := map[string]map[int]bool{}
	for _, x := range s.File.Reproduction {
		if x.Kind != scenario.KindPredicted || len(x.Sensitivity) == 0 {
			continue
		}
		vs := rowVariants(s, x.Savanna, figs)
		for _, op := range x.Sensitivity {
			if reads[op] == nil {
				reads[op] = map[int]bool{}
				ops = append(ops, op)
			}
			for _, vi := range vs {
				reads[op][vi] = true
			}
		}
	}
	out := map[string][]int{}
	for op, set := range reads {
		for vi := range s.Variants {
			if set[vi] {
				out[op] = append(out[op], vi)
			}
		}
	}
	return ops, out
}

// planPerturbations derives, for each op the predicted rows name and
// each direction, the variants those rows read with the op's price on
// each host at value × (1 ∓ u), u being the op's uncertainty in that
// host's model (which may differ between hosts). An op whose
// uncertainty is 0 on every host moves nothing and gets no run.
func planPerturbations(s *scenario.Scenario, models []map[string]*cost.Model, figs map[string]report.Tree) ([]*perturbation, error) {
	table := costops.Table()
	ops, reads := sensitivityOps(s, figs)
	var out []*perturbation
	for _, op := range ops {
		id, ok := table.Lookup(op)
		if !ok {
			// validation refused it; a table that lost the op since is a
			// build defect, said as such.
			return nil, fmt.Errorf("sensitivity op %q is not in the run's cost table", op)
		}
		for _, sign := range []float64{-1, 1} {
			p := &perturbation{op: op, factor: map[bool]string{true: "1-u", false: "1+u"}[sign < 0]}
			moves := false
			for _, vi := range reads[op] {
				v := s.Variants[vi]
				var over []scenario.CostOverride
				for _, h := range s.File.HostNames() {
					m := models[vi][h]
					u := m.Uncertainty(id)
					if u == 0 {
						continue
					}
					e := m.Entries[id]
					f := 1 + sign*u
					over = append(over, scenario.CostOverride{Host: h, Op: op, Value: e.Value * f, Unit: e.Unit,
						Uncertainty: e.Uncertainty, Spread: e.Spread, SpreadSource: e.SpreadSource,
						Source: fmt.Sprintf("simrun reproduce --sensitivity: %s x %s (u = %s of %s)", op, strconv.FormatFloat(f, 'g', -1, 64),
							strconv.FormatFloat(u, 'g', -1, 64), m.Name())})
				}
				if len(over) == 0 {
					// Nothing moves in this variant: its figures are the
					// run's own.
					continue
				}
				moves = true
				label := fmt.Sprintf("%s x(%s)", op, p.factor)
				dv, err := s.WithCostOverrides(v, label, over)
				if err != nil {
					return nil, err
				}
				p.variants = append(p.variants, vi)
				p.runs = append(p.runs, rig.VariantRun{Scenario: s, Variant: dv, Seed: v.Seed(), Label: s.File.Name + ": " + label + " of variant " + v.Name})
			}
			if !moves {
				// u = 0 on every host: the same for the other direction.
				break
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// bands evaluates every predicted row with sensitivity over the
// perturbed runs' figures (figs, indexed as pooled).
func (r *reproduced) bands(figs []report.Tree) error {
	for i := range r.rows {
		row := &r.rows[i]
		x := row.x
		if x.Kind != scenario.KindPredicted || len(x.Sensitivity) == 0 {
			continue
		}
		bd := &band{lo: row.value, hi: row.value}
		reads := map[int]bool{}
		for _, vi := range rowVariants(r.s, x.Savanna, r.figures) {
			reads[vi] = true
		}
		for _, op := range x.Sensitivity {
			ran := false
			for _, p := range r.perturbations {
				// A perturbation counts for the row only where it moved a
				// variant the row reads.
				if p.op != op || !slices.ContainsFunc(p.variants, func(vi int) bool { return reads[vi] }) {
					continue
				}
				ran = true
				env := make(map[string]report.Tree, len(r.figures))
				for name, t := range r.figures {
					env[name] = t
				}
				for i, vi := range p.variants {
					env[r.s.Variants[vi].Name] = figs[p.first+i]
				}
				v, err := expect.Value(x.Savanna, env)
				if err != nil {
					return fmt.Errorf("%s: reproduction %q with %s x(%s): %w", r.s.Path, x.Figure, op, p.factor, err)
				}
				bd.lo, bd.hi = min(bd.lo, v), max(bd.hi, v)
				bd.moved++
			}
			if !ran {
				bd.zero = append(bd.zero, op)
			}
		}
		row.band = bd
	}
	return nil
}
