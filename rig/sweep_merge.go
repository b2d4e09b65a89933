package rig

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/savanna-sim/savanna/rig/expect"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

// BuildSweep makes a sweep's report from every one of its points (each
// index exactly once; MergeSweep checks that for files): each
// expectation is evaluated at every grid point and seed over the
// figures every variant measured there. When an expectation cannot be
// evaluated (a figure that does not exist), the report counts it as not
// held, carries the reason, and the error is an *InvalidError.
func BuildSweep(plan report.SweepPlan, points []*report.SweepPoint) (*report.Sweep, error) {
	grid := plan.GridPoints()
	at := make(map[int]*report.SweepPoint, len(points))
	for _, p := range points {
		at[p.Index] = p
	}
	exps := make([]report.SweepExpectation, len(plan.Expect))
	seenErr := make([]map[string]bool, len(plan.Expect))
	for i, x := range plan.Expect {
		exps[i] = report.SweepExpectation{Expr: x, Held: make([]int, grid)}
		seenErr[i] = map[string]bool{}
	}
	var errs []error
	for g := range grid {
		for j := range plan.Seeds {
			env := map[string]report.Tree{}
			for v, name := range plan.Variants {
				if p := at[(v*grid+g)*plan.Seeds+j]; p != nil {
					env[name] = p.Figures
				}
			}
			results, _ := expect.Evaluate(plan.Expect, env)
			for i, r := range results {
				if r.Held {
					exps[i].Held[g]++
				}
				if r.Err != nil && !seenErr[i][r.Err.Error()] {
					seenErr[i][r.Err.Error()] = true
					exps[i].Errors = append(exps[i].Errors, r.Err.Error())
					errs = append(errs, fmt.Errorf("expect[%d] %q: %w", i, r.Expr, r.Err))
				}
			}
		}
	}
	s := report.NewSweep(plan, points, exps)
	if len(errs) > 0 {
		return s, &InvalidError{errors.Join(errs...)}
	}
	return s, nil
}

// MergeSweep joins the points of a sweep's shards (sources[i] names
// where points[i] was read, for the messages) into its report, the same
// bytes as one machine's run of every point. It refuses points of
// different sweeps (another scenario file, another Savanna, other seeds,
// another plan), a point given twice and a point missing, each with an
// error naming the files.
func MergeSweep(points []*report.SweepPoint, sources []string) (*report.Sweep, error) {
	if len(points) == 0 {
		return nil, errors.New("no point files (point-NNNNN.json) in the folders given: give the --out folders of simrun run --shard")
	}
	ref, refSrc := points[0].Plan, sources[0]
	for i, p := range points[1:] {
		src := sources[i+1]
		switch {
		case p.Plan.Hash != ref.Hash || p.Plan.File != ref.File:
			return nil, fmt.Errorf("points of different scenario files: %s is %s (sha256 %s), %s is %s (sha256 %s)",
				refSrc, ref.File, short(ref.Hash), src, p.Plan.File, short(p.Plan.Hash))
		case p.Plan.Savanna != ref.Savanna:
			return nil, fmt.Errorf("points of different simrun versions: %s ran on savanna %s, %s on savanna %s; run every shard with the same build",
				refSrc, ref.Savanna, src, p.Plan.Savanna)
		case !reflect.DeepEqual(p.Plan.BaseSeeds, ref.BaseSeeds):
			return nil, fmt.Errorf("points of different seeds: %s has first seeds %v, %s has %v (give every shard the same --seed)",
				refSrc, ref.BaseSeeds, src, p.Plan.BaseSeeds)
		case !reflect.DeepEqual(p.Plan, ref):
			return nil, fmt.Errorf("points of different sweeps of %s: the plans in %s and %s differ", ref.File, refSrc, src)
		}
	}
	from := map[int]string{}
	for i, p := range points {
		if prev, dup := from[p.Index]; dup {
			return nil, fmt.Errorf("point %d is given twice: in %s and in %s (the same shard's folder twice, or two runs of one shard?)", p.Index, prev, sources[i])
		}
		from[p.Index] = sources[i]
	}
	if missing := ref.Points() - len(from); missing > 0 {
		var list []string
		for k := range ref.Points() {
			if _, ok := from[k]; !ok {
				list = append(list, strconv.Itoa(k))
			}
		}
		hint := ""
		if n := commonShards(points); n > 1 {
			shards := map[int]bool{}
			for _, l := range list {
				k, _ := strconv.Atoi(l)
				shards[k%n] = true
			}
			var ss []string
			for s := range shards {
				ss = append(ss, fmt.Sprintf("%d/%d", s, n))
			}
			sort.Strings(ss)
			hint = fmt.Sprintf("; point k is shard k mod %d's, so shard(s) %s did not finish or were not given", n, strings.Join(ss, ", "))
		}
		if len(list) > 20 {
			list = append(list[:20], "...")
		}
		return nil, fmt.Errorf("%d of the sweep's %d points are missing: %s%s", missing, ref.Points(), strings.Join(list, ", "), hint)
	}
	sorted := append([]*report.SweepPoint(nil), points...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Index < sorted[j].Index })
	return BuildSweep(ref, sorted)
}

// commonShards is the shard count every point ran with, 0 when they
// differ or ran unsharded.
func commonShards(points []*report.SweepPoint) int {
	n := -1
	for _, p := range points {
		_, of, ok := strings.Cut(p.Shard, "/")
		m, err := strconv.Atoi(of)
		if !ok || err != nil {
			return 0
		}
		if n >= 0 && m != n {
			return 0
		}
		n = m
	}
	return max(n, 0)
}

func short(h string) string { return h[:min(12, len(h))] }

// checkSweep builds every variant at every grid point of s's sweep
// without running it, so that simrun validate finds what only the
// models can (a QAT instance count over the device's most) at any point.
func checkSweep(s *scenario.Scenario) error {
	sw := s.Sweep()
	if sw == nil {
		return nil
	}
	for i, v := range sw.Cells() {
		if _, err := build(s, v, Options{checkOnly: true}, v.Seed()); err != nil {
			return fmt.Errorf("sweep point %s of variant %s: %w", gridLabel(sw.Keys, sw.GridValues(i%sw.GridPoints())), v.Name, err)
		}
	}
	return nil
}

// gridLabel names a grid point: key=value, ...
func gridLabel(keys, values []string) string {
	parts := make([]string, len(keys))
	for i := range keys {
		parts[i] = keys[i] + "=" + values[i]
	}
	return strings.Join(parts, ", ")
}
