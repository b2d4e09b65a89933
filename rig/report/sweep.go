package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Sweep is a sweep's report: every figure of every variant against the
// grid, its seeds summarised, and each expectation's outcome per grid
// point with its knee. It is a function of the plan and the points'
// figures only, so that a single machine's run and a merge of any
// number of shards give the same bytes.
type Sweep struct {
	SweepPlan
	// Points is the number of points run.
	Points int `json:"points"`
	// Columns name the grid points, in order ("32", or "32, 1ms" for a
	// grid of two keys; "all seeds" for a sweep of seeds only).
	Columns []string `json:"grid_points"`
	// Expectations are the scenario's, each over every grid point.
	Expectations []SweepExpectation `json:"expectations"`
	// Figures maps VARIANT.path to the figure's summary at each grid
	// point, in Columns' order.
	Figures map[string][]Summary `json:"figures"`

	filter *Filter
}

// SweepExpectation is one expectation's outcome over a sweep.
type SweepExpectation struct {
	Expr string `json:"expr"`
	// Held counts, per grid point, the seeds for which it held (of the
	// plan's Seeds): evaluated over every variant's figures of that
	// grid point and seed.
	Held []int `json:"held"`
	// Errors are the distinct reasons it could not be evaluated (an
	// evaluation that fails counts as not held).
	Errors []string `json:"errors,omitempty"`
	// Knees are where its outcome changes (see Knee), one per swept key
	// and value of the other keys.
	Knees []Knee `json:"knees,omitempty"`
}

// Knee is where an expectation's outcome changes along one swept key:
// the first value of the key, in the grid's order, at which the outcome
// for the majority of seeds (held for more than half of them, else
// failed) differs from its outcome at the key's first value, the other
// keys held at Where.
type Knee struct {
	Key string `json:"key"`
	// Where gives the other keys' values (key=value, ...), empty for a
	// grid of one key.
	Where string `json:"where,omitempty"`
	// First is the outcome at the key's first value ("held" or
	// "failed"); At is the knee's value, empty when the outcome never
	// changes.
	First string `json:"first"`
	At    string `json:"at,omitempty"`
}

// Summary is one figure at one grid point over the seeds that have it.
type Summary struct {
	// N is the number of seeds with the figure (0: none has it).
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// NewSweep builds a sweep's report from its plan, every point (each
// index once, as a merge checks) and the expectations' outcomes, which
// the rig evaluates (rig.BuildSweep).
func NewSweep(plan SweepPlan, points []*SweepPoint, exps []SweepExpectation) *Sweep {
	grid := plan.GridPoints()
	s := &Sweep{SweepPlan: plan, Points: len(points), Expectations: exps, Figures: map[string][]Summary{}}
	for g := range grid {
		s.Columns = append(s.Columns, strings.Join(plan.GridValues(g), ", "))
	}
	if len(plan.Keys) == 0 {
		s.Columns = []string{"all seeds"}
	}
	samples := map[string][][]float64{}
	sorted := append([]*SweepPoint(nil), points...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Index < sorted[j].Index })
	for _, p := range sorted {
		_, g, _ := plan.Locate(p.Index)
		for _, f := range p.Figures.Flatten() {
			k := p.Variant + "." + f.Path
			v, ok := samples[k]
			if !ok {
				v = make([][]float64, grid)
				samples[k] = v
			}
			v[g] = append(v[g], f.Value)
		}
	}
	for k, byGrid := range samples {
		row := make([]Summary, grid)
		for g, vs := range byGrid {
			row[g] = summarise(vs)
		}
		s.Figures[k] = row
	}
	for i := range s.Expectations {
		s.Expectations[i].Knees = plan.knees(s.Expectations[i].Held)
	}
	return s
}

// summarise is the median and range of a grid point's seeds; the median
// of an even number is the mean of the middle two.
func summarise(vs []float64) Summary {
	if len(vs) == 0 {
		return Summary{}
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Summary{N: n, Median: med, Min: s[0], Max: s[n-1]}
}

// majority is an expectation's outcome at a grid point: held when it
// held for more than half of the seeds.
func (p *SweepPlan) majority(held int) string {
	if 2*held > p.Seeds {
		return "held"
	}
	return "failed"
}

// knees finds, for every swept key and every value of the other keys,
// the first value of the key whose majority outcome differs from the
// first value's (Knee).
func (p *SweepPlan) knees(held []int) []Knee {
	var out []Knee
	stride := make([]int, len(p.Keys))
	n := 1
	for k := len(p.Keys) - 1; k >= 0; k-- {
		stride[k] = n
		n *= len(p.Values[k])
	}
	for k, key := range p.Keys {
		for g := range p.GridPoints() {
			if (g/stride[k])%len(p.Values[k]) != 0 {
				continue
			}
			// g is the line's start: key k at its first value.
			kn := Knee{Key: key, First: p.majority(held[g])}
			var where []string
			vals := p.GridValues(g)
			for o := range p.Keys {
				if o != k {
					where = append(where, p.Keys[o]+"="+vals[o])
				}
			}
			kn.Where = strings.Join(where, ", ")
			for i := 1; i < len(p.Values[k]); i++ {
				if p.majority(held[g+i*stride[k]]) != kn.First {
					kn.At = p.Values[k][i]
					break
				}
			}
			out = append(out, kn)
		}
	}
	return out
}

// WriteJSON writes the sweep's report as indented JSON (keys sorted).
// With a filter (WithFilter), the figures are those it selects.
func (s *Sweep) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	c := *s
	c.Figures = map[string][]Summary{}
	for _, k := range s.figurePaths() {
		c.Figures[k] = s.Figures[k]
	}
	return enc.Encode(&c)
}

// WithFilter returns a copy whose printed figures are those f selects;
// a glob that selects none is an error naming it.
func (s *Sweep) WithFilter(f *Filter) (*Sweep, error) {
	if f == nil || len(f.globs) == 0 {
		return s, nil
	}
	var paths []string
	for k := range s.Figures {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	for i, g := range f.src {
		found := false
		for _, p := range paths {
			if v, rest, _ := strings.Cut(p, "."); f.matchOne(i, rest, []string{v}) {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("--figures %q matches no figure of the sweep (its paths start with the variant, such as %s)", g, example(paths))
		}
	}
	c := *s
	c.filter = f
	return &c, nil
}

// figurePaths are the printed figures' paths (VARIANT.path), sorted.
func (s *Sweep) figurePaths() []string {
	var out []string
	for k := range s.Figures {
		if v, rest, _ := strings.Cut(k, "."); s.filter == nil || s.filter.Match(rest, []string{v}) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// headlinePaths are the figures the summary tables and plots show: with
// a filter, those it selects; else the figures the expectations name,
// in the order they first appear, then each app's throughput and
// latency, as a run's headline figures (summary.go).
func (s *Sweep) headlinePaths() []string {
	if s.filter != nil {
		return s.figurePaths()
	}
	variants := map[string]bool{}
	for _, v := range s.Variants {
		variants[v] = true
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if _, ok := s.Figures[p]; ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, e := range s.Expectations {
		for _, ref := range figureRef.FindAllString(e.Expr, -1) {
			ref = bracket.ReplaceAllString(ref, ".$1")
			if v, _, ok := strings.Cut(ref, "."); ok && variants[v] {
				add(ref)
			}
		}
	}
	for _, p := range s.figurePaths() {
		names := strings.Split(p, ".")
		if len(names) < 3 || len(names) > 4 || names[2] == "cpu" {
			continue
		}
		if headline.MatchString(names[len(names)-1]) {
			add(p)
		}
	}
	return out
}

// cell prints a summary: the median, and the range over seeds when its
// ends print differently.
func (s Summary) cell(path string) string {
	if s.N == 0 {
		return "-"
	}
	m, lo, hi := FormatFigure(path, s.Median), FormatFigure(path, s.Min), FormatFigure(path, s.Max)
	if lo == hi {
		return m
	}
	return fmt.Sprintf("%s [%s–%s]", m, lo, hi)
}

// heldCell prints how many seeds an expectation held for.
func (s *Sweep) heldCell(n int) string { return fmt.Sprintf("%d/%d", n, s.Seeds) }

// knee describes a knee in words.
func (k Knee) describe() string {
	where := ""
	if k.Where != "" {
		where = " (with " + k.Where + ")"
	}
	if k.At == "" {
		return fmt.Sprintf("no knee along %s%s: %s at every value", k.Key, where, k.First)
	}
	return fmt.Sprintf("knee at %s = %s%s: %s at the values before it, %s there", k.Key, k.At, where, k.First, other(k.First))
}

// other is the opposite outcome.
func other(outcome string) string {
	if outcome == "held" {
		return "failed"
	}
	return "held"
}

// gridLine describes the grid and the seeds.
func (s *Sweep) gridLine() []string {
	var out []string
	for i, k := range s.Keys {
		out = append(out, fmt.Sprintf("%s = %s", k, strings.Join(s.Values[i], ", ")))
	}
	if len(s.Keys) == 0 {
		out = append(out, "no grid: seeds only")
	}
	var seeds []string
	for i, v := range s.Variants {
		seeds = append(seeds, fmt.Sprintf("%s %d..%d", v, s.BaseSeeds[i], s.BaseSeeds[i]+uint64(s.Seeds)-1))
	}
	out = append(out, fmt.Sprintf("%d seed(s) per grid point: %s", s.Seeds, strings.Join(seeds, "; ")))
	return out
}

// header is the report's first line.
func (s *Sweep) header() string {
	return fmt.Sprintf("sweep of %s: %d points (%d variant(s) × %d grid point(s) × %d seed(s)), savanna %s",
		s.Scenario, s.Points, len(s.Variants), s.GridPoints(), s.Seeds, s.Savanna)
}
