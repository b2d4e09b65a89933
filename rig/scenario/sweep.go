package scenario

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
)

// Sweep is a file's sweep section as written: a grid over dotted keys
// (the keys variants override) and a number of seeds, run on top of
// every variant (docs/scenarios.md, "Sweeps").
type Sweep struct {
	// Grid maps a dotted key path to the list of values it takes, in
	// the order written. Kept as a node: the keys' order is the grid's.
	Grid yaml.Node `yaml:"grid"`
	// Seeds is how many seeds each grid point runs with (default 1):
	// the variant's seed (or simrun run --seed) and the ones after it.
	Seeds int `yaml:"seeds"`
}

// MaxSweepPoints bounds a sweep's points (variants × grid points ×
// seeds). Each point is a whole run (quickstart's takes 0.07 s of wall
// time, a 32-core reload 0.25 s, the largest bundled scenarios
// minutes), loading validates every variant × grid point, and a merge
// holds every point's figures in memory (0.5 MB of JSON a point for the
// 32-core reload scenario): 1024 points of that size are 0.5 GB
// and a night of wall time spread over a few machines.
const MaxSweepPoints = 1024

// SweepPlan is a scenario's sweep expanded: its keys and their values,
// the seeds, and every variant with every grid point applied.
type SweepPlan struct {
	// Keys are the grid's dotted key paths, in file order.
	Keys []string
	// Values are each key's values as written (scalars), in file order.
	Values [][]string
	// Seeds is the number of seeds per grid point (1 or more).
	Seeds int
	// cells[v][g] is variant v of the scenario with grid point g.
	cells [][]*Variant
}

// GridPoints is the number of grid points: the product of the number of
// each key's values (1 for a sweep of seeds only).
func (p *SweepPlan) GridPoints() int {
	n := 1
	for _, v := range p.Values {
		n *= len(v)
	}
	return n
}

// GridValues is grid point g's value of each key. Grid points run in
// row-major order: the first key's values slowest, the last's fastest.
func (p *SweepPlan) GridValues(g int) []string {
	out := make([]string, len(p.Keys))
	for k := len(p.Keys) - 1; k >= 0; k-- {
		n := len(p.Values[k])
		out[k] = p.Values[k][g%n]
		g /= n
	}
	return out
}

// Point is one run of a sweep: a variant at a grid point with a seed.
type Point struct {
	// Index is the point's place in the sweep's order: variants in file
	// order, then grid points (row-major), then seeds.
	Index int
	// Variant is the variant with the grid point's overrides applied;
	// its Name is the variant's.
	Variant *Variant
	// Grid is the grid point's index and Values its value of each key.
	Grid   int
	Values []string
	// SeedIndex is which of the sweep's seeds (from 0); Seed its value.
	SeedIndex int
	Seed      uint64
}

// Points lists every point of the sweep in order. seed, when set,
// replaces each variant's seed (simrun run --seed) as the first of the
// point's seeds; the others follow it (seed+1, seed+2, ...).
func (p *SweepPlan) Points(seed *uint64) []Point {
	var out []Point
	for _, row := range p.cells {
		for g, v := range row {
			base := v.Seed()
			if seed != nil {
				base = *seed
			}
			for j := 0; j < p.Seeds; j++ {
				out = append(out, Point{Index: len(out), Variant: v, Grid: g, Values: p.GridValues(g), SeedIndex: j, Seed: base + uint64(j)})
			}
		}
	}
	return out
}

// Cells are the scenario's variants with each grid point applied, by
// variant then grid point: what simrun validate builds.
func (p *SweepPlan) Cells() []*Variant {
	var out []*Variant
	for _, row := range p.cells {
		out = append(out, row...)
	}
	return out
}

// Sweep returns the scenario's expanded sweep, nil when the file has no
// sweep section.
func (s *Scenario) Sweep() *SweepPlan { return s.sweep }

// gridKey is one key of the grid with its values' nodes.
type gridKey struct {
	key    *yaml.Node
	values []*yaml.Node
}

// expandSweep reads the sweep section and builds every variant × grid
// point, checking each as a variant is checked: a key that does not
// exist, or a value the key cannot take, is an error naming the file,
// the line and the key.
func (s *Scenario) expandSweep(path string, f *File) error {
	if f.Sweep == nil {
		return nil
	}
	sw := f.Sweep
	sweepAt := func(n *yaml.Node, key, format string, args ...any) error {
		line, col := locate(s.doc, "sweep")
		if n != nil && n.Line > 0 {
			line, col = n.Line, n.Column
		}
		return &yamlstrict.Error{File: path, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if sw.Seeds < 0 {
		return sweepAt(mapValue(sweepNode(s.doc), "seeds"), "sweep.seeds", "%d seeds; give 1 or more (default 1)", sw.Seeds)
	}
	plan := &SweepPlan{Seeds: max(sw.Seeds, 1)}
	var keys []gridKey
	g := &sw.Grid
	switch {
	case g.Kind == 0 || (g.Kind == yaml.ScalarNode && g.Tag == "!!null"):
		if sw.Seeds == 0 {
			return sweepAt(nil, "sweep", "a sweep needs a grid ({grid: {dotted.key: [values...]}}) or seeds (2 or more)")
		}
	case g.Kind != yaml.MappingNode:
		return sweepAt(g, "sweep.grid", "expected a mapping of dotted key path to a list of values, such as {\"hosts.web.qat[0].instances\": [32, 64]}")
	default:
		for i := 0; i+1 < len(g.Content); i += 2 {
			k, v := g.Content[i], deref(g.Content[i+1])
			key := "sweep.grid." + k.Value
			if k.Value == "" || len(splitPath(k.Value)) == 0 {
				return sweepAt(k, key, "empty key path")
			}
			if strings.HasPrefix(k.Value, "sweep") || strings.HasPrefix(k.Value, "variants") {
				return sweepAt(k, key, "the grid overrides the scenario's keys, not its sweep or variants sections")
			}
			for _, prev := range keys {
				if prev.key.Value == k.Value {
					return sweepAt(k, key, "key given twice (first at line %d)", prev.key.Line)
				}
			}
			if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return sweepAt(k, key, "expected a non-empty list of the values the key takes, such as [32, 64, 128]")
			}
			gk := gridKey{key: k}
			var labels []string
			for j, x := range v.Content {
				x = deref(x)
				if x.Kind != yaml.ScalarNode {
					return sweepAt(x, fmt.Sprintf("%s[%d]", key, j), "a grid value is a scalar (a number, a duration, a name); sweep structures with variants")
				}
				for jj, l := range labels {
					if l == x.Value {
						return sweepAt(x, fmt.Sprintf("%s[%d]", key, j), "value %q given twice (also %s[%d])", x.Value, key, jj)
					}
				}
				labels = append(labels, x.Value)
				gk.values = append(gk.values, x)
			}
			keys = append(keys, gk)
			plan.Keys = append(plan.Keys, k.Value)
			plan.Values = append(plan.Values, labels)
		}
	}
	points := int64(len(s.Variants)) * int64(plan.Seeds)
	for _, k := range plan.Values {
		points *= int64(len(k))
		if points > MaxSweepPoints {
			break
		}
	}
	if points > MaxSweepPoints {
		return sweepAt(nil, "sweep", "%d variant(s) × the grid × %d seed(s) make more than %d points, the limit (MaxSweepPoints: each point is a whole run and a merge holds every point's figures; docs/scenarios.md, Limits)",
			len(s.Variants), plan.Seeds, MaxSweepPoints)
	}
	for _, v := range s.Variants {
		var row []*Variant
		for gp := range plan.GridPoints() {
			c, err := s.applyGrid(path, v, keys, plan.GridValues(gp), gp, plan)
			if err != nil {
				return err
			}
			row = append(row, c)
		}
		plan.cells = append(plan.cells, row)
	}
	s.sweep = plan
	return nil
}

// applyGrid is variant v with grid point gp's overrides applied and
// checked.
func (s *Scenario) applyGrid(path string, v *Variant, keys []gridKey, values []string, gp int, plan *SweepPlan) (*Variant, error) {
	vdoc := cloneNode(v.doc)
	names := append([]string(nil), v.Overrides...)
	for k, gk := range keys {
		idx := indexOf(plan.Values[k], values[k])
		o := override{path: gk.key.Value, value: gk.values[idx], line: gk.key.Line, col: gk.key.Column}
		if err := setPath(vdoc.Content[0], o); err != nil {
			return nil, &yamlstrict.Error{File: path, Line: o.line, Col: o.col, Key: "sweep.grid." + o.path, Msg: err.Error()}
		}
		names = append(names, o.path)
	}
	label := pointLabel(plan.Keys, values)
	wrap := func(err error) error { return fmt.Errorf("sweep point %s of variant %s: %w", label, v.Name, err) }
	return s.checkedVariant(path, v.Name, vdoc, names, wrap)
}

// checkedVariant checks a variant's document with overrides applied as
// loading checks a variant (aliases, limits, strict decoding,
// validation, the files it names) and returns it; wrap says in errors
// which derived variant it is.
func (s *Scenario) checkedVariant(path, name string, vdoc *yaml.Node, names []string, wrap func(error) error) (*Variant, error) {
	if err := yamlstrict.CheckAliases(path, vdoc, yamlstrict.MaxAliasNodes); err != nil {
		return nil, wrap(err)
	}
	if err := checkLimits(path, vdoc); err != nil {
		return nil, wrap(err)
	}
	var vf File
	if err := yamlstrict.DecodeNode(path, vdoc, &vf); err != nil {
		return nil, wrap(err)
	}
	if err := validate(path, vdoc, &vf); err != nil {
		return nil, wrap(err)
	}
	if err := s.checkFiles(path, vdoc, &vf); err != nil {
		return nil, wrap(err)
	}
	return &Variant{Name: name, File: &vf, Overrides: names, doc: vdoc, path: path}, nil
}

// pointLabel names a grid point in errors: key=value, ...
func pointLabel(keys, values []string) string {
	if len(keys) == 0 {
		return "(seeds only)"
	}
	parts := make([]string, len(keys))
	for i := range keys {
		parts[i] = keys[i] + "=" + values[i]
	}
	return strings.Join(parts, ", ")
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// sweepNode is the document's sweep mapping, nil without one.
func sweepNode(doc *yaml.Node) *yaml.Node {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	return deref(mapValue(n, "sweep"))
}
