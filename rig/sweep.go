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
	type result struct {
		i   int
		p   *report.SweepPoint
		err error
	}
	work := make(chan int)
	results := make(chan result)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p, err := runPoint(s, plan, all[i], shard, stop.get)
				results <- result{i, p, err}
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

	byIndex := map[int]*report.SweepPoint{}
	var errs []error
	var firstErr error
	for r := range results {
		if r.err != nil {
			var inc *IncompleteError
			if !errors.As(r.err, &inc) {
				errs = append(errs, r.err)
				if firstErr == nil {
					firstErr = r.err
				}
				// A point that cannot run stops the others: the sweep is
				// invalid.
				stop.set("an error")
			}
			continue
		}
		byIndex[r.i] = r.p
		if opts.Done != nil && firstErr == nil {
			if err := opts.Done(r.p); err != nil {
				errs = append(errs, err)
				firstErr = err
				stop.set("an error")
			}
		}
	}
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
	w, err := build(s, pt.Variant, Options{}, pt.Seed)
	if err != nil {
		return nil, &InvalidError{fmt.Errorf("sweep point %d: %w", pt.Index, err)}
	}
	if reason := runWorld(w, func(time.Duration) {}, stop); reason != "" {
		return nil, &IncompleteError{Reason: reason, Variant: pt.Variant.Name}
	}
	if err := w.eventErrors(); err != nil {
		return nil, &InvalidError{fmt.Errorf("sweep point %d: %w", pt.Index, err)}
	}
	p := &report.SweepPoint{Format: report.SweepPointFormat, Plan: plan, Index: pt.Index, Shard: shard,
		Variant: pt.Variant.Name, Grid: pt.Values, Seed: pt.Seed, Figures: w.figures()}
	if p.Grid == nil {
		p.Grid = []string{}
	}
	return p.Canonical()
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
