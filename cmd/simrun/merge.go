package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
)

// cmdMerge joins the point files of a sweep's shards into its report,
// the same bytes as one machine's simrun run of the whole sweep.
func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "table", "what to print: table, json or md")
	out := fs.String("out", "", "write sweep.json, sweep.md, sweep.html and a plot per headline figure (sweep-FIGURE.svg) into this folder")
	var figures globList
	fs.Var(&figures, "figures", "print only the figures whose dotted path (VARIANT.path) matches this glob, as simrun run --figures")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: simrun merge DIR... [--format table|json|md] [--out DIR] [--figures GLOB]...\n\nDIR is a folder of point files (point-NNNNN.json) that simrun run --shard I/N --out DIR wrote, or one such file.")
		fs.PrintDefaults()
	}
	dirs, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(dirs) == 0 {
		fs.Usage()
		return 2
	}
	switch *format {
	case "table", "json", "md":
	default:
		fmt.Fprintf(stderr, "simrun merge: --format %q; expected table, json or md\n", *format)
		return 2
	}
	filter, err := report.NewFilter(figures)
	if err != nil {
		fmt.Fprintf(stderr, "simrun merge: --figures: %v\n", err)
		return 2
	}
	points, sources, err := readPoints(dirs)
	if err != nil {
		fmt.Fprintf(stderr, "simrun merge: %v\n", err)
		return 2
	}
	rep, err := rig.MergeSweep(points, sources)
	if rep == nil {
		fmt.Fprintf(stderr, "simrun merge: %v\n", err)
		return 2
	}
	return printSweep(rep, err, *format, filter, *out, stdout, stderr)
}

// readPoints reads every point file of the folders (or files) given, in
// the order given and by name within a folder.
func readPoints(refs []string) ([]*report.SweepPoint, []string, error) {
	var files []string
	for _, ref := range refs {
		st, err := os.Stat(ref)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			files = append(files, ref)
			continue
		}
		found, err := filepath.Glob(filepath.Join(ref, "point-*.json"))
		if err != nil {
			return nil, nil, err
		}
		if len(found) == 0 {
			return nil, nil, fmt.Errorf("%s: no point files (point-NNNNN.json); is it the --out folder of a simrun run --shard?", ref)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	var points []*report.SweepPoint
	for _, f := range files {
		data, err := readLimited(f, report.MaxSweepPointBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		p, err := report.ParseSweepPoint(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		points = append(points, p)
	}
	return points, files, nil
}

// readLimited reads a file of at most limit bytes, refusing a larger
// one without reading it whole.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over %d bytes, the limit of a point file", limit)
	}
	return data, nil
}
