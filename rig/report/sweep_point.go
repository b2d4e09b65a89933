package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// SweepPointFormat names the format of a sweep point's file, so that a
// merge refuses a file of another kind or of a later format.
const SweepPointFormat = "savanna-sweep-point/1"

// MaxSweepPointBytes is the largest point file a merge reads: 64 MiB,
// over a hundred times a 32-core reload scenario's point (0.5 MB).
const MaxSweepPointBytes = 64 << 20

// SweepPlan is what a sweep runs. Every point's file carries it, so that
// simrun merge needs no scenario file and refuses points of different
// sweeps (another file's bytes, another Savanna, other seeds).
type SweepPlan struct {
	Savanna     string `json:"savanna_version"`
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	// File is the scenario's base name; Hash the SHA-256 of its bytes.
	File string `json:"file"`
	Hash string `json:"scenario_sha256"`
	// Variants are the variants swept, in file order, and BaseSeeds
	// each one's first seed (its file seed or simrun run --seed).
	Variants  []string `json:"variants"`
	BaseSeeds []uint64 `json:"base_seeds"`
	// Keys are the grid's dotted keys and Values each one's values.
	Keys   []string   `json:"keys"`
	Values [][]string `json:"values"`
	// Seeds is the number of seeds per grid point.
	Seeds int `json:"seeds"`
	// Expect are the scenario's expectations, evaluated per grid point
	// and seed over every variant's figures.
	Expect []string `json:"expect"`
}

// GridPoints is the number of grid points (1 for a sweep of seeds only).
func (p *SweepPlan) GridPoints() int {
	n := 1
	for _, v := range p.Values {
		n *= len(v)
	}
	return n
}

// Points is the number of points: variants × grid points × seeds.
func (p *SweepPlan) Points() int { return len(p.Variants) * p.GridPoints() * p.Seeds }

// GridValues is grid point g's value of each key (row-major: the last
// key fastest), as scenario.SweepPlan orders them.
func (p *SweepPlan) GridValues(g int) []string {
	out := make([]string, len(p.Keys))
	for k := len(p.Keys) - 1; k >= 0; k-- {
		n := len(p.Values[k])
		out[k] = p.Values[k][g%n]
		g /= n
	}
	return out
}

// Locate is where point index k sits: its variant, grid point and seed
// index (the sweep's order: variants, then grid points, then seeds).
func (p *SweepPlan) Locate(k int) (variant, grid, seed int) {
	seed = k % p.Seeds
	k /= p.Seeds
	grid = k % p.GridPoints()
	return k / p.GridPoints(), grid, seed
}

// check refuses a plan whose shape cannot describe a sweep, so that a
// hostile point file cannot make a merge divide by zero or index out of
// range.
func (p *SweepPlan) check() error {
	if len(p.Variants) == 0 || len(p.BaseSeeds) != len(p.Variants) {
		return fmt.Errorf("plan: %d variants and %d base seeds", len(p.Variants), len(p.BaseSeeds))
	}
	if len(p.Keys) != len(p.Values) {
		return fmt.Errorf("plan: %d keys and %d value lists", len(p.Keys), len(p.Values))
	}
	if p.Seeds < 1 {
		return fmt.Errorf("plan: %d seeds", p.Seeds)
	}
	n := int64(len(p.Variants)) * int64(p.Seeds)
	for i, v := range p.Values {
		if len(v) == 0 {
			return fmt.Errorf("plan: key %q has no values", p.Keys[i])
		}
		n *= int64(len(v))
		if n > 1<<20 {
			return fmt.Errorf("plan: more than %d points", 1<<20)
		}
	}
	if n > 1<<20 {
		return fmt.Errorf("plan: more than %d points", 1<<20)
	}
	return nil
}

// SweepPoint is one run of a sweep as its file (point-NNNNN.json in a
// shard's --out folder) holds it: the plan, where the point sits and
// the figures it measured.
type SweepPoint struct {
	Format string    `json:"format"`
	Plan   SweepPlan `json:"plan"`
	// Index is the point's place in the sweep's order.
	Index int `json:"index"`
	// Shard is the share that ran it ("1/3"), for the messages of a
	// merge; it does not enter the report.
	Shard   string   `json:"shard,omitempty"`
	Variant string   `json:"variant"`
	Grid    []string `json:"grid"`
	Seed    uint64   `json:"seed"`
	Figures Tree     `json:"figures"`
}

// FileName is the point's file name in a shard's folder.
func (p *SweepPoint) FileName() string { return fmt.Sprintf("point-%05d.json", p.Index) }

// WriteJSON writes the point's file (indented, keys sorted).
func (p *SweepPoint) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(p)
}

// Canonical is the point as a merge reads it back from its file: a
// single machine's report is built from these, so that it and a merge
// of shards see the same values.
func (p *SweepPoint) Canonical() (*SweepPoint, error) {
	var b bytes.Buffer
	if err := p.WriteJSON(&b); err != nil {
		return nil, err
	}
	return ParseSweepPoint(b.Bytes())
}

// ParseSweepPoint reads a point's file. The file comes from another
// machine: anything that is not a point of this format (another format,
// a plan that describes no sweep, an index outside it, a figure that is
// not a finite number) is an error saying what, never a panic.
func ParseSweepPoint(data []byte) (*SweepPoint, error) {
	if len(data) > MaxSweepPointBytes {
		return nil, fmt.Errorf("%d bytes, over the limit of %d for a point file", len(data), MaxSweepPointBytes)
	}
	var raw struct {
		SweepPoint
		Figures json.RawMessage `json:"figures"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a sweep point file: %w", err)
	}
	p := raw.SweepPoint
	if p.Format != SweepPointFormat {
		return nil, fmt.Errorf("format %q, expected %q (a point file of simrun run --shard or --out)", p.Format, SweepPointFormat)
	}
	if err := p.Plan.check(); err != nil {
		return nil, err
	}
	if p.Index < 0 || p.Index >= p.Plan.Points() {
		return nil, fmt.Errorf("index %d outside the sweep's %d points", p.Index, p.Plan.Points())
	}
	v, g, s := p.Plan.Locate(p.Index)
	want := p.Plan.GridValues(g)
	if p.Variant != p.Plan.Variants[v] || !equalStrings(p.Grid, want) || p.Seed != p.Plan.BaseSeeds[v]+uint64(s) {
		return nil, fmt.Errorf("point %d is variant %s at %v with seed %d, but the plan puts variant %s at %v with seed %d there",
			p.Index, p.Variant, p.Grid, p.Seed, p.Plan.Variants[v], want, p.Plan.BaseSeeds[v]+uint64(s))
	}
	var figs map[string]any
	fd := json.NewDecoder(bytes.NewReader(raw.Figures))
	fd.UseNumber()
	if err := fd.Decode(&figs); err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	t, err := treeOf(figs, "")
	if err != nil {
		return nil, fmt.Errorf("figures: %w", err)
	}
	p.Figures = t
	return &p, nil
}

// treeOf turns decoded JSON objects into a figure Tree: every leaf a
// finite number.
func treeOf(m map[string]any, at string) (Tree, error) {
	t := Tree{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := join(at, k)
		switch v := m[k].(type) {
		case map[string]any:
			sub, err := treeOf(v, p)
			if err != nil {
				return nil, err
			}
			t[k] = sub
		case json.Number:
			f, err := v.Float64()
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("%s: %q is not a finite number", p, v.String())
			}
			t[k] = f
		default:
			return nil, fmt.Errorf("%s: a figure is a number or an object of figures, not %T", p, v)
		}
	}
	return t, nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
