package report

import (
	"encoding/json"
	"io"
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
	// Reproduction is the scenario's published figures beside
	// Savanna's, for the summary of the printed reports (simrun fills it
	// from the scenario's reproduction rows).
	Reproduction []Reproduction `json:"-"`
	// filter, when set, selects the figures the printed tree shows
	// (WithFilter).
	filter *Filter
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
// With a filter (WithFilter), the figures are only those it selects.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if r.filter != nil {
		c := *r
		c.Figures = r.filteredFigures()
		return enc.Encode(&c)
	}
	return enc.Encode(r)
}
