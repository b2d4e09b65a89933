package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/savanna-sim/savanna/internal/version"
	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/expect"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/scenarios"
)

const reproduceUsage = "usage: simrun reproduce [--out FILE] [--sensitivity] [-j K] [FILE|NAME...]"

// cmdReproduce runs every bundled scenario that has a reproduction
// section (or the scenarios named) and writes the table of published
// figures beside Savanna's: docs/reproduction.md is its output, never
// typed by hand. With --sensitivity it reruns each scenario with every
// cost op its predicted rows name moved by the op's uncertainty, and
// prints the band of each such row.
func cmdReproduce(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the table to this file instead of standard output")
	sens := fs.Bool("sensitivity", false, "rerun each predicted row's sensitivity ops at value x (1 - u) and x (1 + u) and print the band of the figure")
	jobs := fs.Int("j", 1, "run this many scenarios, and then sensitivity runs, at once (the output is the same bytes whatever the number)")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(stderr, reproduceUsage)
		return 2
	}
	if *jobs < 1 {
		fmt.Fprintf(stderr, "simrun reproduce: -j %d: give 1 or more runs at once\n", *jobs)
		return 2
	}
	names := fs.Args()
	bundled := len(names) == 0
	if bundled {
		names = scenarios.Names()
	}
	started := time.Now()
	var list []*scenario.Scenario
	for _, name := range names {
		s, err := loadScenario(name)
		if err != nil {
			fmt.Fprintf(stderr, "simrun: %v\n", err)
			return 2
		}
		if len(s.File.Reproduction) == 0 {
			if !bundled {
				fmt.Fprintf(stderr, "simrun reproduce: %s has no reproduction: section\n", s.Path)
				return 2
			}
			continue
		}
		list = append(list, s)
	}
	results, err := reproduceAll(list, *jobs, *sens)
	if err != nil {
		fmt.Fprintf(stderr, "simrun: %v\n", err)
		return 2
	}
	var b bytes.Buffer
	writeReproduction(&b, results, *sens, bundled)
	if *out != "" {
		if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "simrun: %v\n", err)
			return 2
		}
	} else if _, err := stdout.Write(b.Bytes()); err != nil {
		return 2
	}
	if *out != "" {
		fmt.Fprintf(stderr, "simrun reproduce: %d scenario(s), %d sensitivity run(s), %.1f wall s\n",
			len(results), sensitivityRuns(results), time.Since(started).Seconds())
	}
	for _, r := range results {
		if !r.passed {
			fmt.Fprintln(stderr, "simrun: some scenarios' expectations failed; simrun run NAME shows which")
			return 1
		}
	}
	return 0
}

// reproduced is one scenario's rows, evaluated, with the cost models its
// figures came from.
type reproduced struct {
	s      *scenario.Scenario
	name   string
	passed bool
	rows   []reproducedRow
	costs  []costUse
	// figures are the run's, by variant: what a perturbed run's figures
	// stand beside.
	figures map[string]report.Tree
	// perturbations are the sensitivity runs' plan (nil without
	// --sensitivity).
	perturbations []*perturbation
}

// reproducedRow is one row with Savanna's value and, for a predicted
// row with sensitivity under --sensitivity, its band.
type reproducedRow struct {
	x     scenario.Reproduction
	value float64
	band  *band
}

// band is the range of a row's figure over the baseline and every run
// with one of its ops moved; zero lists the ops of the row whose
// uncertainty is 0 on every host (so they move nothing).
type band struct {
	lo, hi float64
	moved  int
	zero   []string
}

// reproduceAll runs each scenario at its own seed (jobs at once), then,
// with sens, every perturbation of every scenario on the sweep's pool,
// and evaluates the rows.
func reproduceAll(list []*scenario.Scenario, jobs int, sens bool) ([]*reproduced, error) {
	out := make([]*reproduced, len(list))
	errs := make([]error, len(list))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, max(len(list), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i], errs[i] = reproduceBase(list[i], sens)
			}
		}()
	}
	for i := range list {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if !sens {
		return out, nil
	}
	var runs []rig.VariantRun
	for _, r := range out {
		for _, p := range r.perturbations {
			p.first = len(runs)
			runs = append(runs, p.runs...)
		}
	}
	figs, err := rig.RunVariants(runs, rig.SweepOptions{Jobs: jobs})
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		if err := r.bands(figs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reproduceBase runs a scenario, evaluates its rows and, with sens,
// plans its perturbations.
func reproduceBase(s *scenario.Scenario, sens bool) (*reproduced, error) {
	name := s.File.Name
	r, err := rig.Run(s, rig.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res := &reproduced{s: s, name: name, passed: r.Passed(), figures: r.Figures}
	for i, x := range s.File.Reproduction {
		v, err := expect.Value(x.Savanna, r.Figures)
		if err != nil {
			return nil, fmt.Errorf("%s: reproduction[%d]: %w", s.Path, i, err)
		}
		res.rows = append(res.rows, reproducedRow{x: x, value: v})
	}
	models, err := variantCosts(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res.costs = costUses(s, models)
	if sens {
		if res.perturbations, err = planPerturbations(s, models, r.Figures); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return res, nil
}

func sensitivityRuns(results []*reproduced) int {
	n := 0
	for _, r := range results {
		for _, p := range r.perturbations {
			n += len(p.runs)
		}
	}
	return n
}

// writeReproduction writes the document: how to read it, the cost
// models, the table.
func writeReproduction(b *bytes.Buffer, results []*reproduced, sens, bundled bool) {
	cmd := "simrun reproduce"
	if sens {
		cmd += " --sensitivity"
	}
	fmt.Fprintf(b, "# Reproduction of the seed articles' figures\n\n")
	if bundled {
		fmt.Fprintf(b, "Generated by `%s --out docs/reproduction.md` (Savanna %s) from the bundled\nscenarios, each at its own seed. Do not edit by hand.\n\n", cmd, version.Version)
	} else {
		fmt.Fprintf(b, "Generated by `%s` (Savanna %s) from the scenarios named, each at its own\nseed.\n\n", cmd, version.Version)
	}
	fmt.Fprintf(b, "Each row has a *kind*. **predicted**: follows from the frozen machine costs and the scenario's\n")
	fmt.Fprintf(b, "shape, with no parameter tuned to it; only these rows test the model, and the target for them is\n")
	fmt.Fprintf(b, "within 25%% of the published figure. **declared**: an input taken from the article, a\n")
	fmt.Fprintf(b, "calibration point; the note says what was set to meet it. **derived**: follows from other rows\n")
	fmt.Fprintf(b, "(Little's law on a closed loop, a ratio of two rows); the note names them. *Published* is the\n")
	fmt.Fprintf(b, "figure exactly as the article prints it; *ratio* is Savanna's value over it; the note says where\n")
	fmt.Fprintf(b, "a gap comes from.")
	if sens {
		fmt.Fprintf(b, " *Band* is the range of Savanna's figure over the scenario's run and reruns of\n")
		fmt.Fprintf(b, "the variants the row reads in which each cost op the row names (its `sensitivity`) is set, one\n")
		fmt.Fprintf(b, "op at a time and on every host, to value × (1 − u) and value × (1 + u), u being the op's stated\n")
		fmt.Fprintf(b, "uncertainty in that host's cost file; an op whose uncertainty is 0 moves nothing and is listed\n")
		fmt.Fprintf(b, "as such. *In band* says whether the published figure lies inside. The band joins the moves of\n")
		fmt.Fprintf(b, "one op at a time; it is not the range with every op moved together.")
	}
	fmt.Fprintf(b, "\n\n## Cost models\n\n")
	fmt.Fprintf(b, "The prices behind each scenario's figures: the model's name, the first 12 hex digits of the\n")
	fmt.Fprintf(b, "SHA-256 of its file as loaded (before a scenario's overrides, which are counted beside the\n")
	fmt.Fprintf(b, "host), and the hosts priced by it. The files are in `sim/cost/data/`, each price with a source\n")
	fmt.Fprintf(b, "independent of these figures (`docs/cost-model.md`).\n\n")
	fmt.Fprintf(b, "| scenario | cost model | sha256 | hosts |\n|---|---|---|---|\n")
	for _, r := range results {
		for _, c := range r.costs {
			fmt.Fprintf(b, "| `%s` | `%s` | `%s` | %s |\n", r.name, c.model, c.digest, strings.Join(c.hosts, ", "))
		}
	}
	fmt.Fprintf(b, "\n## Figures\n\n")
	if sens {
		fmt.Fprintf(b, "| scenario | kind | figure | published | Savanna | ratio | band | in band | note |\n|---|---|---|---:|---:|---:|---:|---|---|\n")
	} else {
		fmt.Fprintf(b, "| scenario | kind | figure | published | Savanna | ratio | note |\n|---|---|---|---:|---:|---:|---|\n")
	}
	predicted, within := 0, 0
	for _, r := range results {
		for _, row := range r.rows {
			x := row.x
			ratio := "-"
			if x.Published.Value != 0 {
				q := row.value / x.Published.Value
				ratio = num(q)
				if x.Kind == scenario.KindPredicted {
					predicted++
					if q >= 0.75 && q <= 1.25 {
						within++
					}
				}
			} else if x.Kind == scenario.KindPredicted {
				predicted++
			}
			note := mdText(x.Note)
			if sens {
				cell, in := row.band.cells(x.Published.Value)
				fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name, x.Kind, mdText(x.Figure), x.Published.Text, num(row.value), ratio, cell, in, note)
			} else {
				fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s | %s |\n", r.name, x.Kind, mdText(x.Figure), x.Published.Text, num(row.value), ratio, note)
			}
		}
	}
	fmt.Fprintf(b, "\nPredicted rows within 25%% of the published figure: %d of %d.\n", within, predicted)
}

// cells are a band's printed cells: "lo – hi" (with the ops of
// uncertainty 0 named) and whether published lies inside.
func (bd *band) cells(published float64) (string, string) {
	if bd == nil {
		return "-", "-"
	}
	zero := ""
	if len(bd.zero) > 0 {
		zero = " (u = 0: " + strings.Join(bd.zero, ", ") + ")"
	}
	if bd.moved == 0 {
		return "-" + zero, "-"
	}
	in := "no"
	if published >= bd.lo && published <= bd.hi {
		in = "yes"
	}
	return num(bd.lo) + " – " + num(bd.hi) + zero, in
}

// mdText is a note or figure name on one line of a Markdown table.
func mdText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "\n", " "), "|", "\\|")
}

// num prints a reproduced figure by the reports' number format.
func num(v float64) string { return report.FormatNumber(v) }

// reproductionRows evaluates a scenario's reproduction rows over a run's
// figures, for the summary of its printed reports. A row whose figures
// the run lacks (it stopped early) keeps the error instead of a value.
func reproductionRows(s *scenario.Scenario, r *report.Report) []report.Reproduction {
	var out []report.Reproduction
	for i, x := range s.File.Reproduction {
		row := report.Reproduction{Figure: x.Figure, Kind: x.Kind, Published: x.Published.Value, PublishedText: x.Published.Text, Note: x.Note}
		v, err := expect.Value(x.Savanna, r.Figures)
		if err != nil {
			row.Err = fmt.Sprintf("reproduction[%d]: %v", i, err)
		}
		row.Savanna = v
		out = append(out, row)
	}
	return out
}
