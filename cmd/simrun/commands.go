package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/savanna-sim/savanna/internal/version"
	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/scenarios"
	"github.com/savanna-sim/savanna/sim/numa"
)

// loadScenario reads a file, or a bundled scenario by name when no such
// file exists.
func loadScenario(ref string) (*scenario.Scenario, error) {
	if _, err := os.Stat(ref); err == nil {
		return scenario.Load(ref)
	}
	data, err := scenarios.Read(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: no such file, and no bundled scenario of that name (simrun list shows them)", ref)
	}
	return scenario.Parse("scenarios/"+filepath.Base(ref)+map[bool]string{true: "", false: ".yaml"}[filepath.Ext(ref) == ".yaml"], data)
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

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.String("seed", "", "replace the scenario's seed")
	format := fs.String("format", "table", "what to print: table, json or md")
	out := fs.String("out", "", "write report.json, report.md, report.html, timing.json and captures into this folder")
	timing := fs.Bool("timing", false, "put the wall-clock figures (simulated-to-wall ratio, packets per wall second) into report.json too, which then differs from run to run")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simrun run FILE|NAME [--seed N] [--format table|json|md] [--out DIR] [--timing]")
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
	opts := rig.Options{Out: *out}
	if *seed != "" {
		n, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "simrun run: --seed %q is not a non-negative integer\n", *seed)
			return 2
		}
		opts.Seed = &n
	}
	s, err := loadScenario(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	var span time.Duration
	for _, v := range s.Variants {
		span += rig.Span(v)
	}
	clock := newRunClock(stderr, span)
	opts.Progress = clock.progress
	r, err := rig.Run(s, opts)
	clock.finish()
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		var inv *rig.InvalidError
		if errors.As(err, &inv) {
			return 2
		}
		return 2
	}
	if *timing {
		r.Timing = &clock.timing
	}
	if *timing || isTerminal(stderr) {
		for _, t := range clock.timing.Variants {
			fmt.Fprintf(stderr, "simrun: %s: %.3g simulated s in %.3g wall s (%.3g×), %.0f simulated packets per wall second\n",
				t.Variant, t.SimSeconds, t.WallSeconds, t.SimToWall, t.PacketsPerWallSecond)
		}
	}
	if *out != "" {
		if err := writeOutputs(*out, r, &clock.timing); err != nil {
			fmt.Fprintf(stderr, "simrun: %v\n", err)
			return 2
		}
	}
	switch *format {
	case "json":
		err = r.WriteJSON(stdout)
	case "md":
		err = r.WriteMarkdown(stdout)
	default:
		err = r.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	if !r.Passed() {
		return 1
	}
	return 0
}

// writeOutputs writes the report files into dir, and timing.json with
// the run's wall-clock figures, kept out of report.json so that it stays
// the same from run to run.
func writeOutputs(dir string, r *report.Report, timing *report.Timing) error {
	for name, write := range map[string]func(io.Writer) error{
		"report.json": r.WriteJSON,
		"report.md":   r.WriteMarkdown,
		"report.html": r.WriteHTML,
		"timing.json": timing.WriteJSON,
	} {
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
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: simrun validate FILE|NAME")
		return 2
	}
	s, err := loadScenario(args[0])
	if err == nil {
		err = rig.Check(s)
	}
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
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
