// Package rig runs scenarios: it builds every variant's models from the
// scenario file, runs them in virtual time, collects their figures,
// checks the expectations and produces the report.
package rig

import (
	"errors"
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
	// Stop, when set, is asked after every step of simulated time (20
	// steps of the warm-up, 100 of the measured phase) whether to stop;
	// a non-empty answer ("stopped by SIGINT") stops the run at that
	// step. Run then returns the report of what ran, marked incomplete,
	// with an *IncompleteError, and evaluates no expectation. The rig
	// reads no clock: a caller that stops on wall time (simrun run
	// --max-wall) reads it in Stop.
	Stop func() string

	// checkOnly builds a variant for Check and Figures, which never run
	// it: what only a run uses (the http app's page corpus) is left
	// out, so that validating costs no more than the limits of
	// scenario.Limits allow.
	checkOnly bool
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
	// included. Sim is then End, or less for a run Options.Stop stopped.
	Done            bool
	Packets, Events uint64
}

// InvalidError marks a scenario that cannot run (exit code 2), as opposed
// to one that ran and failed its expectations (exit code 1).
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// IncompleteError is the error of a run that Options.Stop stopped: the
// report Run returns with it holds the variants that ran to the end and
// the figures of the interrupted one so far.
type IncompleteError struct {
	// Reason is Stop's answer.
	Reason string
	// Variant is the variant stopped, at Sim of its End.
	Variant  string
	Sim, End time.Duration
	// Done is the simulated time run over every variant, of Total.
	Done, Total time.Duration
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("incomplete: %s after %v of %v simulated (variant %s at %v of %v); expectations not evaluated",
		e.Reason, e.Done, e.Total, e.Variant, e.Sim, e.End)
}

// runWorld runs a built world, telling step the simulated time after
// each step and stopping at the first step after which stop answers
// non-empty; it returns that answer.
func runWorld(w *world, step func(time.Duration), stop func() string) (reason string) {
	w.run(func(now time.Duration) bool {
		step(now)
		if stop != nil {
			reason = stop()
		}
		return reason == ""
	})
	return reason
}

// Run runs every variant of s and evaluates its expectations.
//
// When the variants ran but an expectation cannot be evaluated (it names
// a figure that does not exist, say), Run returns the report, with that
// expectation failed and its error in the detail, and an *InvalidError:
// the figures of a long run are not lost to a typo. When Options.Stop
// stops the run, Run returns the partial report and an
// *IncompleteError.
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
	var total, done time.Duration
	for _, v := range variants {
		total += Span(v)
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
		stopped := runWorld(w, func(now time.Duration) { at.Sim = now; progress(at) }, opts.Stop)
		if err := w.eventErrors(); err != nil {
			return nil, &InvalidError{err}
		}
		if err := w.closeCaptures(); err != nil {
			return nil, err
		}
		r.Variants = append(r.Variants, v.Name)
		figures := w.figures()
		r.Figures[v.Name] = figures
		r.Latencies = append(r.Latencies, w.latencies()...)
		if w.sampler != nil {
			r.Series = append(r.Series, w.sampler.series...)
		}
		r.Profiles = append(r.Profiles, w.profiles()...)
		if stopped == "" {
			at.Sim = end
		}
		at.Done, at.Packets, at.Events = true, w.packets(), w.eng.Fired()
		progress(at)
		done += at.Sim
		if stopped != "" {
			inc := &IncompleteError{Reason: stopped, Variant: v.Name, Sim: at.Sim, End: end, Done: done, Total: total}
			r.Incomplete = inc.Error()
			return r, inc
		}
	}
	results, err := expect.Evaluate(s.File.Expect, r.Figures)
	for _, x := range results {
		r.Expectations = append(r.Expectations, report.Expectation{Expr: x.Expr, Held: x.Held, Detail: x.Detail})
	}
	if err != nil {
		var errs []error
		for i, x := range results {
			if x.Err != nil {
				errs = append(errs, s.Errorf(fmt.Sprintf("expect[%d]", i), "%q: %v", x.Expr, x.Err))
			}
		}
		return r, &InvalidError{errors.Join(errs...)}
	}
	return r, nil
}

// Span is the simulated time a variant runs: its warm-up and its
// measured duration.
func Span(v *scenario.Variant) time.Duration { return v.File.Span() }

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
// are reported by simrun validate too; then it checks every expectation
// and reproduction expression against the figures the built variants
// have (see Figures), so that a misspelt figure is found before a long
// run rather than after it.
func Check(s *scenario.Scenario) error {
	env, err := Figures(s)
	if err != nil {
		return err
	}
	if err := checkSweep(s); err != nil {
		return err
	}
	var errs []error
	c := expect.NewChecker(env)
	for i, x := range s.File.Expect {
		if err := c.Check(x); err != nil {
			errs = append(errs, s.Errorf(fmt.Sprintf("expect[%d]", i), "%q: %v", x, err))
		}
	}
	for i, x := range s.File.Reproduction {
		if err := c.CheckValue(x.Savanna); err != nil {
			errs = append(errs, s.Errorf(fmt.Sprintf("reproduction[%d].savanna", i), "%q: %v", x.Savanna, err))
		}
	}
	return errors.Join(errs...)
}

// Figures builds every variant of s without running it and returns each
// one's figure tree: the names a run's report will have, with values
// that mean nothing yet. It builds one variant at a time, leaving out
// what only a run needs (the http corpus); what it does build (NIC
// pools, QAT rings, stack instances, cores) is bounded by the limits of
// scenario.Limits, which loading checked.
func Figures(s *scenario.Scenario) (map[string]report.Tree, error) {
	env := map[string]report.Tree{}
	for _, v := range s.Variants {
		w, err := build(s, v, Options{checkOnly: true}, v.Seed())
		if err != nil {
			return nil, err
		}
		env[v.Name] = w.figures()
	}
	return env, nil
}
