package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
)

// sweepFlags are simrun run's flags for a scenario's sweep.
type sweepFlags struct {
	shard *string
	count *int
	jobs  *int
	sweep *bool
}

// sweepFlagsOn defines the sweep flags on run's flag set.
func sweepFlagsOn(fs *flag.FlagSet) sweepFlags {
	return sweepFlags{
		shard: fs.String("shard", "", "run shard I/N of the sweep's points (point k when k mod N == I, I from 0) and write one JSON file per point into --out; auto (or no --shard) reads SIMRUN_SHARD, JOB_COMPLETION_INDEX with SHARD_COUNT, or SLURM_ARRAY_TASK_ID (docs/scale-out.md)"),
		count: fs.Int("shard-count", 0, "the number of shards when the index comes from JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's completions); SHARD_COUNT otherwise"),
		jobs:  fs.Int("j", 1, "run this many sweep points at once, each on its own engine (the report is the same bytes whatever the number)"),
		sweep: fs.Bool("sweep", true, "run the scenario's sweep: section; --sweep=false runs its variants once, as a file without one"),
	}
}

// wanted reports whether simrun run runs s as a sweep: it has one and
// --sweep was not turned off, or a sweep flag was given (an error for a
// file without a sweep).
func (f sweepFlags) wanted(s *scenario.Scenario) bool {
	if !*f.sweep {
		return false
	}
	return s.Sweep() != nil || (*f.shard != "" && *f.shard != "auto") || *f.jobs != 1
}

// executeSweep runs a scenario's sweep: every point, or with a shard its
// share, whose point files go into --out; the whole sweep also prints
// and writes its report (sweep.json, sweep.md, sweep.html and a plot per
// headline figure). Exit codes: 0 every point ran (the expectations'
// outcomes are what a sweep measures, so one failing at some grid
// points is its result, not a failure), 1 stopped (--max-wall, Ctrl-C),
// 2 invalid or an expectation that cannot be evaluated.
func executeSweep(s *scenario.Scenario, f runFlags, sf sweepFlags, signals <-chan os.Signal, release func(), stdout, stderr io.Writer) int {
	if s.Sweep() == nil {
		fmt.Fprintf(stderr, "simrun run: %s has no sweep: section; --shard and -j share out a sweep's points (docs/scenarios.md, Sweeps)\n", s.Path)
		return 2
	}
	if *sf.jobs < 1 {
		fmt.Fprintf(stderr, "simrun run: -j %d: give 1 or more points to run at once\n", *sf.jobs)
		return 2
	}
	shard, err := resolveShard(*sf.shard, *sf.count, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "simrun run: %v\n", err)
		return 2
	}
	if shard.sharded() && f.out == "" {
		unset := ""
		if shard.From != "--shard" {
			unset = " (or unset the variable to run every point here)"
		}
		fmt.Fprintf(stderr, "simrun run: shard %s (from %s) writes its points' files: give --out DIR, then join the folders with simrun merge%s\n", shard, shard.From, unset)
		return 2
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			printErr(stderr, err)
			return 2
		}
	}
	started := time.Now()
	total := len(rig.ShardPoints(len(s.Sweep().Points(f.seed)), shard.I, shard.N))
	done := 0
	opts := rig.SweepOptions{Seed: f.seed, Shard: shard.I, Shards: shard.N, Jobs: *sf.jobs}
	opts.Stop = stopper(f, started, signals, release)
	opts.Done = func(p *report.SweepPoint) error {
		done++
		if f.progress || isTerminal(stderr) {
			fmt.Fprintf(stderr, "simrun: point %d (%s %v seed %d) done, %d of %d, %.1f wall s\n", p.Index, p.Variant, p.Grid, p.Seed, done, total, time.Since(started).Seconds())
		}
		if f.out == "" {
			return nil
		}
		return writeAtomic(filepath.Join(f.out, p.FileName()), p.WriteJSON)
	}
	points, runErr := rig.RunSweep(s, opts)
	var inc *rig.SweepStoppedError
	if runErr != nil && !errors.As(runErr, &inc) {
		printErr(stderr, runErr)
		return 2
	}
	if shard.sharded() {
		fmt.Fprintf(stdout, "simrun: shard %s (from %s) of %s: %d of its %d points run, %d files in %s; join the shards' folders with simrun merge\n",
			shard, shard.From, s.Path, len(points), total, len(points), f.out)
		if inc != nil {
			printErr(stderr, runErr)
			return 1
		}
		return 0
	}
	if inc != nil {
		printErr(stderr, runErr)
		return 1
	}
	plan, err := rig.SweepPlanOf(s, f.seed)
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	rep, buildErr := rig.BuildSweep(plan, points)
	return printSweep(rep, buildErr, f.format, f.figures, f.out, stdout, stderr)
}

// printSweep writes a sweep's report files into out (if set) and prints
// it in format: the same for a whole run and a merge.
func printSweep(rep *report.Sweep, buildErr error, format string, figures *report.Filter, out string, stdout, stderr io.Writer) int {
	code := 0
	if out != "" {
		if err := writeSweepOutputs(out, rep); err != nil {
			printErr(stderr, err)
			code = 2
		}
	}
	printed, err := rep.WithFilter(figures)
	if err == nil {
		switch format {
		case "json":
			err = printed.WriteJSON(stdout)
		case "md":
			err = printed.WriteMarkdown(stdout)
		default:
			err = printed.WriteTable(stdout)
		}
	}
	if err != nil {
		printErr(stderr, err)
		code = 2
	}
	if buildErr != nil {
		printErr(stderr, buildErr)
		return 2
	}
	return code
}

// writeSweepOutputs writes sweep.json, sweep.md, sweep.html and each
// plot as an SVG file beside them.
func writeSweepOutputs(dir string, rep *report.Sweep) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{{"sweep.json", rep.WriteJSON}, {"sweep.md", rep.WriteMarkdown}, {"sweep.html", rep.WriteHTML}}
	plots, err := rep.Plots()
	if err != nil {
		return err
	}
	for _, p := range plots {
		files = append(files, struct {
			name  string
			write func(io.Writer) error
		}{p.File, func(w io.Writer) error { _, err := io.WriteString(w, p.SVG+"\n"); return err }})
	}
	for _, f := range files {
		if err := writeAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes a file under a temporary name and renames it,
// so that a merge never reads half a point of a shard still running or
// killed.
func writeAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
