package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/savanna-sim/savanna/internal/version"
	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/scenarios"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/numa"
)

// loadScenario reads a file, or a bundled scenario by name when no such
// file exists. A folder of that name (a run's --out folder is often
// named after its scenario) does not hide the bundled one. allow are the
// --allow-path folders the scenario may read files from besides its own.
func loadScenario(ref string, allow ...string) (*scenario.Scenario, error) {
	opts := scenario.Options{AllowPaths: allow}
	data, bundledErr := scenarios.Read(ref)
	if fi, err := os.Stat(ref); err == nil && (!fi.IsDir() || bundledErr != nil) {
		return scenario.LoadWith(ref, opts)
	}
	if bundledErr != nil {
		return nil, fmt.Errorf("%s: no such file, and no bundled scenario of that name (simrun list shows them)", ref)
	}
	return scenario.ParseWith("scenarios/"+filepath.Base(ref)+map[bool]string{true: "", false: ".yaml"}[filepath.Ext(ref) == ".yaml"], data, opts)
}

// allowPaths is --allow-path: repeatable, each a folder or a list of
// them separated as in PATH (os.PathListSeparator).
type allowPaths []string

func (a *allowPaths) String() string { return strings.Join(*a, string(os.PathListSeparator)) }

func (a *allowPaths) Set(v string) error {
	for _, p := range filepath.SplitList(v) {
		if p != "" {
			*a = append(*a, p)
		}
	}
	return nil
}

// allowPathFlag defines --allow-path on fs, the same for run and
// validate.
func allowPathFlag(fs *flag.FlagSet) *allowPaths {
	a := &allowPaths{}
	fs.Var(a, "allow-path", "a folder (repeatable, or a list separated by "+string(os.PathListSeparator)+") besides the scenario's own from which it may read the files it names (cost.file)")
	return a
}

// parseInterleaved parses flags that may come before or after the one
// positional argument, as users type them.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// runFlags are simrun run's settings once parsed.
type runFlags struct {
	format   string
	out      string
	timing   bool
	progress bool
	// maxWall stops the run after this much wall time (0: no limit).
	maxWall time.Duration
	seed    *uint64
	// figures filters the printed figure tree (--figures).
	figures *report.Filter
}

// globList is a flag given once per glob (--figures a.* --figures b.**).
type globList []string

func (g *globList) String() string     { return strings.Join(*g, " ") }
func (g *globList) Set(s string) error { *g = append(*g, s); return nil }

func cmdRun(args []string, stdout, stderr io.Writer) int {
	return cmdRunWith(args, stdout, stderr, notifyStop)
}

// notifyStop relays SIGINT and SIGTERM to a run, which stops at its next
// step with a partial report; release hands them back to their default
// action, so that a second Ctrl-C ends the process at once.
func notifyStop() (signals <-chan os.Signal, release func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// cmdRunWith is cmdRun with the source of stop signals given (specs
// send their own).
func cmdRunWith(args []string, stdout, stderr io.Writer, notify func() (<-chan os.Signal, func())) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.String("seed", "", "replace the scenario's seed")
	format := fs.String("format", "table", "what to print: table, json or md")
	out := fs.String("out", "", "write report.json, report.md, report.html, timing.json, VARIANT.cpu.folded (CPU profiles) and captures into this folder")
	timing := fs.Bool("timing", false, "put the wall-clock figures (simulated-to-wall ratio, packets per wall second) into report.json too, which then differs from run to run")
	progress := fs.Bool("progress", false, "draw the progress bar and the wall-time estimate on stderr even when it is not a terminal")
	allow := allowPathFlag(fs)
	maxWall := fs.Duration("max-wall", 0, "stop after this much wall time (such as 30s or 10m) with a partial report marked incomplete (exit 1); 0 for no limit")
	var figures globList
	fs.Var(&figures, "figures", "print only the figures whose dotted path matches this glob (after the summary; repeat for more): each dot-separated part matches one name as path.Match does (* ? [a-z]), ** any number of names; the path may start with the variant; a glob matching nothing is an error")
	sweep := sweepFlagsOn(fs)
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the run (runtime/pprof; read it with go tool pprof) to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simrun run FILE|NAME [--seed N] [--format table|json|md] [--out DIR] [--timing] [--progress] [--max-wall D] [--figures GLOB]... [-j K] [--shard I/N|auto] [--shard-count N] [--sweep=false]")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	switch *format {
	case "table", "json", "md":
	default:
		fmt.Fprintf(stderr, "simrun run: --format %q; expected table, json or md\n", *format)
		return 2
	}
	if *maxWall < 0 {
		fmt.Fprintf(stderr, "simrun run: --max-wall %v is negative; give a wall time such as 30s, or 0 for no limit\n", *maxWall)
		return 2
	}
	f := runFlags{format: *format, out: *out, timing: *timing, progress: *progress, maxWall: *maxWall}
	if f.figures, err = report.NewFilter(figures); err != nil {
		fmt.Fprintf(stderr, "simrun run: --figures: %v\n", err)
		return 2
	}
	if *seed != "" {
		n, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: --seed %q is not a non-negative integer\n", *seed)
			return 2
		}
		f.seed = &n
	}
	s, err := loadScenario(pos[0], *allow...)
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	if *cpuprofile != "" {
		stop, err := startCPUProfile(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: --cpuprofile: %v\n", err)
			return 2
		}
		defer stop()
	}
	signals, release := notify()
	defer release()
	if sweep.wanted(s) {
		return executeSweep(s, f, sweep, signals, release, stdout, stderr)
	}
	return execute(s, f, signals, release, stdout, stderr)
}

// startCPUProfile starts runtime/pprof's CPU profile into path; stop ends
// it and closes the file. The profile covers the run and its report, not
// the parsing of flags and scenario.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("starting the profile into %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// printErr prints an error, each of its lines (errors.Join puts one
// error a line) prefixed with simrun:.
func printErr(w io.Writer, err error) {
	fmt.Fprintf(w, "simrun: %s\n", strings.ReplaceAll(err.Error(), "\n", "\nsimrun: "))
}

// signalName names a stop signal as users know it.
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// execute runs a loaded scenario and prints and writes its report. The
// report is printed and written whenever the variants ran, even when an
// expectation could not be evaluated (exit 2) or the run was stopped
// (exit 1, marked incomplete), so that a long run's figures are kept.
// A signal on signals, or maxWall passing, stops the run at its next
// step; release is called on the first signal.
func execute(s *scenario.Scenario, f runFlags, signals <-chan os.Signal, release func(), stdout, stderr io.Writer) int {
	started := time.Now()
	opts := rig.Options{Out: f.out, Seed: f.seed}
	opts.Stop = stopper(f, started, signals, release)
	var span time.Duration
	for _, v := range s.Variants {
		span += rig.Span(v)
	}
	clock := newRunClock(stderr, span, f.progress)
	opts.Progress = clock.progress
	r, runErr := rig.Run(s, opts)
	clock.finish()
	if r == nil {
		printErr(stderr, runErr)
		return 2
	}
	if f.timing {
		r.Timing = &clock.timing
	}
	r.Reproduction = reproductionRows(s, r)
	if f.timing || isTerminal(stderr) {
		for _, t := range clock.timing.Variants {
			fmt.Fprintf(stderr, "simrun: %s: %.3g simulated s in %.3g wall s (%.3g×), %.0f simulated packets per wall second\n",
				t.Variant, t.SimSeconds, t.WallSeconds, t.SimToWall, t.PacketsPerWallSecond)
		}
	}
	code := 0
	if f.out != "" {
		if err := writeOutputs(f.out, r, &clock.timing); err != nil {
			printErr(stderr, err)
			code = 2
		}
	}
	printed, err := r.WithFilter(f.figures)
	if err == nil {
		switch f.format {
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
	var inc *rig.IncompleteError
	switch {
	case errors.As(runErr, &inc):
		printErr(stderr, runErr)
		return max(code, 1)
	case runErr != nil:
		printErr(stderr, runErr)
		return 2
	case code != 0:
		return code
	case !r.Passed():
		return 1
	}
	return 0
}

// writeOutputs writes the report files into dir, and timing.json with
// the run's wall-clock figures, kept out of report.json so that it stays
// the same from run to run.
func writeOutputs(dir string, r *report.Report, timing *report.Timing) error {
	files := map[string]func(io.Writer) error{
		"report.json": r.WriteJSON,
		"report.md":   r.WriteMarkdown,
		"report.html": r.WriteHTML,
		"timing.json": timing.WriteJSON,
	}
	for _, v := range r.Variants {
		files[v+".cpu.folded"] = func(w io.Writer) error { return r.WriteFolded(w, v) }
	}
	for name, write := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	allow := allowPathFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simrun validate FILE|NAME [--allow-path DIR]...")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	s, err := loadScenario(pos[0], *allow...)
	if err == nil {
		err = rig.Check(s)
	}
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	if sw := s.Sweep(); sw != nil {
		fmt.Fprintf(stdout, "%s: valid (%d variant(s), %d expectation(s); a sweep of %d points: %d grid point(s) × %d seed(s) per variant)\n",
			s.Path, len(s.Variants), len(s.File.Expect), len(sw.Points(nil)), sw.GridPoints(), sw.Seeds)
		return 0
	}
	fmt.Fprintf(stdout, "%s: valid (%d variant(s), %d expectation(s))\n", s.Path, len(s.Variants), len(s.File.Expect))
	return 0
}

func cmdList(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: simrun list")
		return 2
	}
	fmt.Fprintln(stdout, "Bundled scenarios (simrun run NAME):")
	for _, name := range scenarios.Names() {
		data, _ := scenarios.Read(name)
		desc := ""
		if s, err := scenario.Parse(name+".yaml", data); err == nil {
			desc = firstLine(s.File.Description)
		}
		fmt.Fprintf(stdout, "  %-24s %s\n", name, desc)
	}
	fmt.Fprintln(stdout, "\nApp kinds:")
	for _, k := range rig.AppKinds() {
		fmt.Fprintf(stdout, "  %-24s %s\n", k[0], k[1])
	}
	fmt.Fprintln(stdout, "\nMachine presets (simrun topo NAME):")
	for _, name := range numa.PresetNames() {
		d, _ := numa.PresetDescription(name)
		fmt.Fprintf(stdout, "  %-24s %s\n", name, d)
	}
	fmt.Fprintln(stdout, "\nCost models (a host's cost: {model: NAME}; docs/cost-model.md):")
	for _, m := range cost.Models() {
		frozen := ""
		if m.Frozen {
			frozen = ", frozen"
		}
		fmt.Fprintf(stdout, "  %-24s %s (%s%s)\n", m.Key, firstLine(m.Description), m.Name, frozen)
	}
	return 0
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

func cmdTopo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("topo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	name := "host"
	if len(pos) > 1 {
		fmt.Fprintln(stderr, "usage: simrun topo [PRESET|host] [--json]")
		return 2
	}
	if len(pos) == 1 {
		name = pos[0]
	}
	t, err := numa.Preset(name)
	if err != nil {
		fmt.Fprintf(stderr, "simrun topo: %v\n", err)
		return 2
	}
	mem, err := numa.NewMemory(t, nil)
	if err != nil {
		fmt.Fprintf(stderr, "simrun topo: %v\n", err)
		return 2
	}
	if *asJSON {
		err = numa.WriteJSON(stdout, t, mem)
	} else {
		err = numa.WriteText(stdout, t, mem)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun topo: %v\n", err)
		return 2
	}
	return 0
}

func cmdVersion(stdout io.Writer) int {
	fmt.Fprintf(stdout, "savanna %s (scenario format %d)\n", version.Version, scenario.FormatVersion)
	return 0
}

// stopper is a run's Stop check: the first signal (release is called on
// it) or --max-wall past started ends the run, with the reason.
func stopper(f runFlags, started time.Time, signals <-chan os.Signal, release func()) func() string {
	return func() string {
		select {
		case sig := <-signals:
			if release != nil {
				release()
			}
			return "stopped by " + signalName(sig)
		default:
		}
		if f.maxWall > 0 && time.Since(started) >= f.maxWall {
			return fmt.Sprintf("stopped by --max-wall %v", f.maxWall)
		}
		return ""
	}
}
