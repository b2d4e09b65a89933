package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/savanna-sim/savanna/internal/calibrate"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

// cmdCalibrate measures this machine and writes a cost-model file
// (docs/calibration.md).
func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	return cmdCalibrateWith(args, stdout, stderr, calibrate.Options{})
}

// cmdCalibrateWith is cmdCalibrate with the benchmarks, probe and rule
// given (specs give fakes); flags fill the rest.
func cmdCalibrateWith(args []string, stdout, stderr io.Writer, o calibrate.Options) int {
	if len(args) > 0 && args[0] == "compare" {
		return cmdCalibrateCompare(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "calibrated-cost.yaml", "the cost-model file to write")
	runs := fs.Int("runs", calibrate.DefaultRuns, "runs of each benchmark, interleaved; a price's source gives their median and spread")
	quick := fs.Bool("quick", false, "a fifth of each run's time: a quick look, noisier")
	force := fs.Bool("force", false, "measure and write on a machine too busy for stable figures, marking the file and every price noisy")
	quiet := fs.Bool("quiet", false, "print no line per benchmark run on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simrun calibrate [--out FILE] [--runs N] [--quick] [--force] [--quiet]\n       simrun calibrate compare [--limit FRACTION] [--all] A.yaml B.yaml")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 0 {
		fs.Usage()
		return 2
	}
	if *runs < 1 {
		fmt.Fprintf(stderr, "simrun calibrate: --runs %d; give 1 or more\n", *runs)
		return 2
	}
	o.Runs, o.Quick, o.Force = *runs, *quick, *force
	if !*quiet {
		o.Log = stderr
	}
	r, err := calibrate.Run(o)
	var busy *calibrate.BusyError
	if errors.As(err, &busy) {
		fmt.Fprintf(stderr, "simrun calibrate: refused: %v\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return 2
	}
	def, order, err := calibrate.DefaultModel()
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return 2
	}
	prices := calibrate.Map(r, def, order)
	var buf bytes.Buffer
	if err := calibrate.NewFile(r, prices).Write(&buf); err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return 2
	}
	// The file must load as any cost file does before it replaces one.
	if _, err := cost.For(costops.Table()).Parse(*out, buf.Bytes()); err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: the written model does not load: %v\n", err)
		return 2
	}
	if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return 2
	}
	if err := calibrate.WriteTable(stdout, r, prices); err != nil {
		fmt.Fprintf(stderr, "simrun calibrate: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "Wrote %s in %.1f s; use it with `cost: {file: %s}` under a host of a scenario (docs/cost-model.md).\n",
		*out, r.Elapsed.Seconds(), filepath.Base(*out))
	return 0
}

// cmdCalibrateCompare sets two calibrated cost files side by side: each
// measured price's two values and their difference, flagged beyond the
// limit (5%), so that two calibrations of one machine can be held to
// issue 18's rule. Exit codes: 0 every measured price within the limit
// or marked noisy by a file, 1 some price beyond it unmarked, 2 a bad
// flag or a file that does not read.
func cmdCalibrateCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	limit := fs.Float64("limit", calibrate.DefaultRule().MaxSpread, "the relative difference beyond which a price is flagged")
	all := fs.Bool("all", false, "list the prices both files kept at a default too")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simrun calibrate compare [--limit FRACTION] [--all] A.yaml B.yaml")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 2 {
		fs.Usage()
		return 2
	}
	if !(*limit > 0) {
		fmt.Fprintf(stderr, "simrun calibrate compare: --limit %v; give a fraction above 0 (0.05 is 5%%)\n", *limit)
		return 2
	}
	var data [2][]byte
	for i, name := range pos {
		if data[i], err = os.ReadFile(name); err != nil {
			fmt.Fprintf(stderr, "simrun calibrate compare: %v\n", err)
			return 2
		}
	}
	diffs, err := calibrate.Compare(pos[0], data[0], pos[1], data[1])
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate compare: %v\n", err)
		return 2
	}
	sum, err := calibrate.WriteCompare(stdout, pos[0], pos[1], diffs, *limit, *all)
	if err != nil {
		fmt.Fprintf(stderr, "simrun calibrate compare: %v\n", err)
		return 2
	}
	if sum.Unexplained > 0 {
		return 1
	}
	return 0
}

// writeFileAtomic writes data to path through a temporary file in the
// same folder, so that an interrupted run leaves the old file whole.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
