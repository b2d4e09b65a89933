// Package rig runs scenarios: it builds every variant's models from the
// scenario file, runs them in virtual time, collects their figures,
// checks the expectations and produces the report.
package rig

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/savanna-sim/savanna/internal/version"
	"github.com/savanna-sim/savanna/rig/expect"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

// Options change how a scenario runs.
type Options struct {
	// Seed, when set, replaces the file's seed.
	Seed *uint64
	// Out is a folder for report files and captures; empty writes none.
	Out string
	// Variants limits the run to these variants; empty runs all.
	Variants []string
	// Progress, when set, is told how the run advances: after each step
	// of simulated time and when each variant ends.
	Progress func(Progress)
}

// Progress is where a run is. The rig reads no wall clock: a caller that
// wants wall-clock figures (a progress bar, simulated-to-wall ratios)
// times the calls.
type Progress struct {
	// Variant is the variant running, the Index-th (from 0) of Variants.
	Variant         string
	Index, Variants int
	// Sim is the simulated time reached; End is the variant's end
	// (warm-up plus duration).
	Sim, End time.Duration
	// Done is set on the last call of a variant, with what it simulated:
	// the frames all NICs sent and the engine events fired, warm-up
	// included.
	Done            bool
	Packets, Events uint64
}

// InvalidError marks a scenario that cannot run (exit code 2), as opposed
// to one that ran and failed its expectations (exit code 1).
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// Run runs every variant of s and evaluates its expectations.
func Run(s *scenario.Scenario, opts Options) (*report.Report, error) {
	variants, err := selectVariants(s, opts.Variants)
	if err != nil {
		return nil, &InvalidError{err}
	}
	if opts.Out != "" {
		if err := os.MkdirAll(opts.Out, 0o755); err != nil {
			return nil, err
		}
	}
	r := &report.Report{
		Savanna:     version.Version,
		Scenario:    s.File.Name,
		Description: s.File.Description,
		Reproduces:  s.File.Reproduces,
		File:        filepath.Base(s.Path),
		Hash:        s.Hash,
		Figures:     map[string]report.Tree{},
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(Progress) {}
	}
	for vi, v := range variants {
		seed := v.Seed()
		if opts.Seed != nil {
			seed = *opts.Seed
		}
		r.Seed = seed
		w, err := build(s, v, opts, seed)
		if err != nil {
			return nil, &InvalidError{err}
		}
		end := Span(v)
		at := Progress{Variant: v.Name, Index: vi, Variants: len(variants), End: end}
		progress(at)
		w.run(func(now time.Duration) { at.Sim = now; progress(at) })
		if err := w.eventErrors(); err != nil {
			return nil, &InvalidError{err}
		}
		if err := w.closeCaptures(); err != nil {
			return nil, err
		}
		r.Variants = append(r.Variants, v.Name)
		r.Figures[v.Name] = w.figures()
		r.Latencies = append(r.Latencies, w.latencies()...)
		r.Series = append(r.Series, w.sampler.series...)
		r.Profiles = append(r.Profiles, w.profiles()...)
		at.Sim, at.Done, at.Packets, at.Events = end, true, w.packets(), w.eng.Fired()
		progress(at)
	}
	results, err := expect.Evaluate(s.File.Expect, r.Figures)
	if err != nil {
		return nil, &InvalidError{fmt.Errorf("%s: %w", s.Path, err)}
	}
	for _, x := range results {
		r.Expectations = append(r.Expectations, report.Expectation{Expr: x.Expr, Held: x.Held, Detail: x.Detail})
	}
	return r, nil
}

// Span is the simulated time a variant runs: its warm-up and its
// measured duration.
func Span(v *scenario.Variant) time.Duration { return v.File.Warmup + duration(v.File) }

func selectVariants(s *scenario.Scenario, names []string) ([]*scenario.Variant, error) {
	if len(names) == 0 {
		return s.Variants, nil
	}
	var out []*scenario.Variant
	for _, n := range names {
		found := false
		for _, v := range s.Variants {
			if v.Name == n {
				out = append(out, v)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no variant %q", s.Path, n)
		}
	}
	return out, nil
}

// Check builds every variant of s without running it, so that errors
// only the models can find (an unknown preset, a CPU that does not exist)
// are reported by simrun validate too.
func Check(s *scenario.Scenario) error {
	for _, v := range s.Variants {
		if _, err := build(s, v, Options{}, v.Seed()); err != nil {
			return err
		}
	}
	return nil
}

// Figures builds every variant of s without running it and returns each
// one's figure tree: the names a run's report will have, with values
// that mean nothing yet.
func Figures(s *scenario.Scenario) (map[string]report.Tree, error) {
	env := map[string]report.Tree{}
	for _, v := range s.Variants {
		w, err := build(s, v, Options{}, v.Seed())
		if err != nil {
			return nil, err
		}
		env[v.Name] = w.figures()
	}
	return env, nil
}
