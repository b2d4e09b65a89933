package rig

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/savanna-sim/savanna/internal/version"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim/cost"
)

// SweepOptions change how a sweep runs.
type SweepOptions struct {
	// Seed, when set, is every variant's first seed (simrun run --seed).
	Seed *uint64
	// Shard and Shards select a share of the points: point k runs when
	// k mod Shards == Shard. Shards 0 or 1 runs every point.
	Shard, Shards int
	// Jobs is how many points run at once, each on its own engine in its
	// own goroutine (the engine is single-threaded and the models keep
	// no package state); 0 or 1 runs them one after the other.
	Jobs int
	// Stop, when set, is asked after every step of every point whether
	// to stop (as Options.Stop); once it answers, every running point
	// stops and no other starts. It is called from several goroutines
	// when Jobs > 1, but never at once.
	Stop func() string
	// Done, when set, is given each point as it finishes (from one
	// goroutine, in the order they finish), so that a shard writes its
	// points as it goes.
	Done func(*report.SweepPoint) error
}

// SweepPlanOf is the plan of s's sweep as every point file carries it.
func SweepPlanOf(s *scenario.Scenario, seed *uint64) (report.SweepPlan, error) {
	sw := s.Sweep()
	if sw == nil {
		return report.SweepPlan{}, &InvalidError{fmt.Errorf("%s: the scenario has no sweep: section (docs/scenarios.md, Sweeps)", s.Path)}
	}
	p := report.SweepPlan{
		Savanna: version.Version, Scenario: s.File.Name, Description: s.File.Description,
		File: filepath.Base(s.Path), Hash: s.Hash,
		Keys: sw.Keys, Values: sw.Values, Seeds: sw.Seeds, Expect: s.File.Expect,
	}
	if p.Expect == nil {
		p.Expect = []string{}
	}
	for _, v := range s.Variants {
		base := v.Seed()
		if seed != nil {
			base = *seed
		}
		p.Variants = append(p.Variants, v.Name)
		p.BaseSeeds = append(p.BaseSeeds, base)
	}
	return p, nil
}

// ShardPoints are the indices of the points shard runs of a sweep of n
// points in shards shards: k mod shards == shard, so that neighbouring
// points (the seeds of a grid point, grid values that cost more as they
// grow) spread over the shards and each takes about the same wall time.
func ShardPoints(n, shard, shards int) []int {
	if shards < 1 {
		shards, shard = 1, 0
	}
	var out []int
	for k := shard; k < n; k += shards {
		out = append(out, k)
	}
	return out
}

// RunSweep runs the points of s's sweep that opts select and returns
// them in index order, each as a merge reads it back from its file
// (report.SweepPoint.Canonical). A run that Stop stopped returns the
// points that finished and a *SweepStoppedError.
func RunSweep(s *scenario.Scenario, opts SweepOptions) ([]*report.SweepPoint, error) {
	plan, err := SweepPlanOf(s, opts.Seed)
	if err != nil {
		return nil, err
	}
	all := s.Sweep().Points(opts.Seed)
	shard := ""
	if opts.Shards > 1 {
		shard = fmt.Sprintf("%d/%d", opts.Shard, opts.Shards)
	}
	idx := ShardPoints(len(all), opts.Shard, opts.Shards)
	jobs := min(max(opts.Jobs, 1), max(len(idx), 1))

	stop := &stopLatch{ask: opts.Stop}
	byIndex, errs := runPool(idx, jobs, stop, func(i int) (*report.SweepPoint, error) {
		return runPoint(s, plan, all[i], shard, stop.get)
	}, opts.Done)
	var out []*report.SweepPoint
	for _, i := range idx {
		if p, ok := byIndex[i]; ok {
			out = append(out, p)
		}
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	if reason := stop.get(); reason != "" || len(out) < len(idx) {
		return out, &SweepStoppedError{Reason: reason, Done: len(out), Total: len(idx)}
	}
	return out, nil
}

// SweepStoppedError is the error of a sweep that SweepOptions.Stop
// stopped: the points returned with it are those that finished.
type SweepStoppedError struct {
	// Reason is Stop's answer.
	Reason string
	// Done of Total points (of the shard) ran to their end.
	Done, Total int
}

func (e *SweepStoppedError) Error() string {
	return fmt.Sprintf("sweep incomplete: %s after %d of %d points; no report made", e.Reason, e.Done, e.Total)
}

// runPoint builds and runs one point on its own engine; no output
// folder (captures and profiles are a single run's).
func runPoint(s *scenario.Scenario, plan report.SweepPlan, pt scenario.Point, shard string, stop func() string) (*report.SweepPoint, error) {
	figs, err := runVariant(s, pt.Variant, pt.Seed, fmt.Sprintf("sweep point %d", pt.Index), stop)
	if err != nil {
		return nil, err
	}
	p := &report.SweepPoint{Format: report.SweepPointFormat, Plan: plan, Index: pt.Index, Shard: shard,
		Variant: pt.Variant.Name, Grid: pt.Values, Seed: pt.Seed, Figures: figs}
	if p.Grid == nil {
		p.Grid = []string{}
	}
	return p.Canonical()
}

// runVariant builds and runs one variant at a seed on its own engine and
// returns its figures; what names the run in errors.
func runVariant(s *scenario.Scenario, v *scenario.Variant, seed uint64, what string, stop func() string) (report.Tree, error) {
	w, err := build(s, v, Options{}, seed)
	if err != nil {
		return nil, &InvalidError{fmt.Errorf("%s: %w", what, err)}
	}
	if reason := runWorld(w, func(time.Duration) {}, stop); reason != "" {
		return nil, &IncompleteError{Reason: reason, Variant: v.Name}
	}
	if err := w.eventErrors(); err != nil {
		return nil, &InvalidError{fmt.Errorf("%s: %w", what, err)}
	}
	return w.figures(), nil
}

// VariantRun is one run of a variant at a seed: a variant derived from a
// scenario's (Scenario.WithCostOverrides) for simrun reproduce
// --sensitivity.
type VariantRun struct {
	Scenario *scenario.Scenario
	Variant  *scenario.Variant
	Seed     uint64
	// Label names the run in errors ("qat-legacy-alloc: compaction_page
	// x1.25").
	Label string
}

// RunVariants runs each of runs to its end on the sweep's pool
// (opts.Jobs at once, opts.Stop asked after every step; the other
// options are a sweep's and are ignored) and returns each run's figures
// in the order of runs, the same whatever the number of jobs. A run that
// Stop stopped leaves the whole incomplete: a *SweepStoppedError.
func RunVariants(runs []VariantRun, opts SweepOptions) ([]report.Tree, error) {
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	stop := &stopLatch{ask: opts.Stop}
	byIndex, errs := runPool(idx, min(max(opts.Jobs, 1), max(len(runs), 1)), stop, func(i int) (report.Tree, error) {
		r := runs[i]
		return runVariant(r.Scenario, r.Variant, r.Seed, r.Label, stop.get)
	}, nil)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if reason := stop.get(); reason != "" || len(byIndex) < len(runs) {
		return nil, &SweepStoppedError{Reason: reason, Done: len(byIndex), Total: len(runs)}
	}
	out := make([]report.Tree, len(runs))
	for i := range runs {
		out[i] = byIndex[i]
	}
	return out, nil
}

// HostCosts returns the cost model each host of variant v runs with (the
// default, a named file or frozen model, with the scenario's overrides
// applied), by host name: the models a run builds, built the same way
// without running anything.
func HostCosts(s *scenario.Scenario, v *scenario.Variant) (map[string]*cost.Model, error) {
	w, err := build(s, v, Options{checkOnly: true}, v.Seed())
	if err != nil {
		return nil, err
	}
	out := make(map[string]*cost.Model, len(w.hosts))
	for name, h := range w.hosts {
		out[name] = h.cost
	}
	return out, nil
}

// runPool runs job(i) for every i of idx, jobs at once, each on its own
// goroutine, and returns the results by index: the pool of sweeps and of
// simrun reproduce --sensitivity. A job stopped early (*IncompleteError)
// is left out without an error; any other error stops the jobs not yet
// started. done, when set, is given each result from one goroutine as it
// finishes, until the first error.
func runPool[T any](idx []int, jobs int, stop *stopLatch, job func(i int) (T, error), done func(T) error) (map[int]T, []error) {
	type result struct {
		i   int
		t   T
		err error
	}
	work := make(chan int)
	results := make(chan result)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				t, err := job(i)
				results <- result{i, t, err}
			}
		}()
	}
	go func() {
		defer close(work)
		for _, i := range idx {
			if stop.get() != "" {
				return
			}
			work <- i
		}
	}()
	go func() { wg.Wait(); close(results) }()

	byIndex := map[int]T{}
	var errs []error
	for r := range results {
		if r.err != nil {
			var inc *IncompleteError
			if !errors.As(r.err, &inc) {
				errs = append(errs, r.err)
				// A job that cannot run stops the others: the whole is
				// invalid.
				stop.set("an error")
			}
			continue
		}
		byIndex[r.i] = r.t
		if done != nil && len(errs) == 0 {
			if err := done(r.t); err != nil {
				errs = append(errs, err)
				stop.set("an error")
			}
		}
	}
	return byIndex, errs
}

// stopLatch remembers the first reason to stop, so that every point's
// goroutine sees it (a signal is read once from its channel).
type stopLatch struct {
	mu     sync.Mutex
	ask    func() string
	reason string
}

func (l *stopLatch) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason == "" && l.ask != nil {
		l.reason = l.ask()
	}
	return l.reason
}

func (l *stopLatch) set(r string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason == "" {
		l.reason = r
	}
}
