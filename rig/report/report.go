package report

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Expectation is one expectation's verdict as reports show it.
type Expectation struct {
	Expr   string `json:"expr"`
	Held   bool   `json:"held"`
	Detail string `json:"detail,omitempty"`
}

// Report is everything a run produced. Encoded as JSON it is the
// report.json of a run: the same scenario file, seed and Savanna version
// give the same bytes.
type Report struct {
	Savanna     string `json:"savanna_version"`
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Reproduces  string `json:"reproduces,omitempty"`
	// File is the scenario's base name; Hash is the SHA-256 of its bytes.
	File string `json:"file"`
	Hash string `json:"scenario_sha256"`
	Seed uint64 `json:"seed"`
	// Variants lists variant names in the file's order.
	Variants []string `json:"variants"`
	// Figures maps a variant to its figures.
	Figures      map[string]Tree `json:"figures"`
	Expectations []Expectation   `json:"expectations"`
	// Incomplete says why the run stopped before its end (simrun run
	// --max-wall, Ctrl-C); the report then holds the variants that
	// finished and the interrupted one's figures so far, and no
	// expectation was evaluated.
	Incomplete string `json:"incomplete,omitempty"`
	// Latencies are the apps' latency distributions, for report.html.
	Latencies []Distribution `json:"-"`
	// Series are figures over time, for report.html.
	Series []Series `json:"-"`
	// Profiles are each host's simulated CPU profile per variant, for
	// the folded-stack files and report.html's flame graphs (their
	// figures are in Figures: HOST.cpu.*.ops and .layers).
	Profiles []Profile `json:"-"`
	// Timing is what the run cost in wall-clock time. It is left out of
	// report.json unless asked for (simrun run --timing), because the
	// same scenario and seed must give the same report.json.
	Timing *Timing `json:"timing,omitempty"`
}

// Timing is the wall-clock cost of a run, variant by variant.
type Timing struct {
	Variants []VariantTiming `json:"variants"`
}

// WriteJSON writes the timing as indented JSON.
func (t *Timing) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}

// VariantTiming is one variant's wall-clock cost: how fast the simulation
// ran.
type VariantTiming struct {
	Variant string `json:"variant"`
	// WallSeconds is the time to build and run the variant.
	WallSeconds float64 `json:"wall_seconds"`
	// SimSeconds is the simulated time run, warm-up included.
	SimSeconds float64 `json:"sim_seconds"`
	// SimToWall is simulated seconds per wall second.
	SimToWall float64 `json:"sim_to_wall"`
	// Packets are the frames every simulated NIC sent, warm-up included.
	Packets uint64 `json:"sim_packets"`
	// PacketsPerWallSecond is Packets over WallSeconds.
	PacketsPerWallSecond float64 `json:"sim_packets_per_wall_second"`
	// Events are the engine events fired.
	Events uint64 `json:"sim_events"`
}

// Passed reports whether the run finished and every expectation held.
func (r *Report) Passed() bool {
	if r.Incomplete != "" {
		return false
	}
	for _, e := range r.Expectations {
		if !e.Held {
			return false
		}
	}
	return true
}

// WriteJSON writes the report as indented JSON (map keys sorted, so the
// output is deterministic).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// rows returns every figure path of any variant, sorted, with one value
// per variant ("-" where a variant lacks it).
func (r *Report) rows() (paths []string, cells map[string][]string) {
	cells = map[string][]string{}
	for vi, v := range r.Variants {
		for _, f := range r.Figures[v].Flatten() {
			row, ok := cells[f.Path]
			if !ok {
				row = make([]string, len(r.Variants))
				for i := range row {
					row[i] = "-"
				}
				cells[f.Path] = row
				paths = append(paths, f.Path)
			}
			row[vi] = FormatValue(f.Value)
		}
	}
	sort.Strings(paths)
	return paths, cells
}

// FormatValue prints a figure compactly: integers without a fraction,
// other values with up to six significant digits.
func FormatValue(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// WriteTable writes a terminal table: one row per figure, one column per
// variant, then the expectations. Like nstat, it leaves out figures that
// are zero in every variant, and it leaves out xstats (they repeat the
// basic counters by their driver names) and each core's breakdown by
// operation, layer and app phase (the host's cpu.all rows sum them up);
// JSON and Markdown carry all.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "scenario %s (seed %d, savanna %s)\n", r.Scenario, r.Seed, r.Savanna)
	if r.Incomplete != "" {
		fmt.Fprintf(w, "INCOMPLETE (%s)\n", r.Incomplete)
	}
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(r.Description))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "figure\t%s\t\n", strings.Join(r.Variants, "\t"))
	paths, cells := r.rows()
	hidden := 0
	for _, p := range paths {
		if allZero(cells[p]) || strings.Contains(p, ".xstats.") || perCoreDetail.MatchString(p) {
			hidden++
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", p, strings.Join(cells[p], "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d figures that are zero everywhere, and xstats, not shown: --format json shows every figure)\n", hidden)
	}
	r.writeExpectations(w, "")
	return nil
}

// WriteMarkdown writes the report as Markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# %s\n\n", r.Scenario)
	if r.Description != "" {
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(r.Description))
	}
	if r.Reproduces != "" {
		fmt.Fprintf(w, "Reproduces: %s\n\n", strings.TrimSpace(r.Reproduces))
	}
	fmt.Fprintf(w, "Seed %d, scenario `%s` (sha256 %s), Savanna %s.\n\n", r.Seed, r.File, r.Hash[:min(12, len(r.Hash))], r.Savanna)
	if r.Incomplete != "" {
		fmt.Fprintf(w, "**Incomplete:** %s\n\n", r.Incomplete)
	}
	if len(r.Expectations) > 0 {
		fmt.Fprintf(w, "## Expectations\n\n")
		r.writeExpectations(w, "- ")
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Figures\n\n| figure | %s |\n|---|%s\n", strings.Join(r.Variants, " | "), strings.Repeat("---:|", len(r.Variants)))
	paths, cells := r.rows()
	for _, p := range paths {
		fmt.Fprintf(w, "| `%s` | %s |\n", p, strings.Join(cells[p], " | "))
	}
	return nil
}

func (r *Report) writeExpectations(w io.Writer, bullet string) {
	if len(r.Expectations) == 0 {
		return
	}
	if bullet == "" {
		fmt.Fprintln(w)
	}
	for _, e := range r.Expectations {
		verdict := "PASS"
		if !e.Held {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s%s  %s", bullet, verdict, e.Expr)
		if !e.Held && e.Detail != "" {
			fmt.Fprintf(w, "\n%s      %s", strings.Repeat(" ", len(bullet)), e.Detail)
		}
		fmt.Fprintln(w)
	}
}

// perCoreDetail matches a core's figures by operation, layer and app
// phase, which the terminal table leaves to the host's roll-up.
var perCoreDetail = regexp.MustCompile(`\.cpu\.[0-9]+\.(ops|layers|during)\.`)

func allZero(cells []string) bool {
	for _, c := range cells {
		if c != "0" && c != "-" {
			return false
		}
	}
	return true
}
