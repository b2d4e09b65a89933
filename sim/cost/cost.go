// Package cost loads cost models: versioned data files in which every
// price Savanna charges for simulated work (a packet through a driver, a
// byte copied, a syscall, a byte compressed at a level) carries its value,
// its unit and its source. A default model is embedded; scenario files may
// name another file or override single entries per host.
//
// The prices are data, never constants in code (architecture invariant 4).
package cost

import (
	_ "embed"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim"
)

//go:embed data/default.yaml
var defaultModel []byte

// FormatVersion is the cost-model file format this package reads.
const FormatVersion = 1

// Entry is one price.
type Entry struct {
	// Value is the price of one unit of the operation, in Unit.
	Value float64 `yaml:"value"`
	// Unit is ns, ps, us or cycles (cycles are converted at the clock
	// rate of the core that does the work).
	Unit string `yaml:"unit"`
	// Source says where the figure comes from: a paper, a benchmark, a
	// measurement on a named machine. It must not be the seed figure the
	// price helps reproduce.
	Source string `yaml:"source"`
}

// File is a cost-model file.
type File struct {
	Version     int              `yaml:"version"`
	Name        string           `yaml:"name"`
	Description string           `yaml:"description"`
	Costs       map[string]Entry `yaml:"costs"`
}

// Model is a validated cost model: an entry for every operation of the
// table it was read against.
type Model struct {
	Name    string
	Entries [hw.NumCostOps]Entry
	ops     *hw.CostTable
}

// Loader reads cost-model files against the run's table of operations.
// Most operations belong to the product (stack/tcp, apps/http ...), which
// a model does not import: the rig builds the table (internal/costops)
// and passes it in.
type Loader struct{ ops *hw.CostTable }

// For returns a loader that names operations by ops.
func For(ops *hw.CostTable) Loader { return Loader{ops: ops} }

// Default returns the embedded default model. The embedded file and the
// run's table are both code, checked together by internal/costops's
// specs; a failure here is a build defect, not user input.
func (l Loader) Default() *Model {
	m, err := l.Parse("default.yaml", defaultModel)
	if err != nil {
		panic(fmt.Sprintf("cost: embedded default model: %v", err))
	}
	return m
}

// DefaultBytes returns the embedded default model's text.
func DefaultBytes() []byte { return append([]byte(nil), defaultModel...) }

// Load reads a cost-model file.
func (l Loader) Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cost model: %w", err)
	}
	return l.Parse(path, data)
}

// Parse parses a complete cost-model file: every operation of the table
// must be priced, and every key must name one.
func (l Loader) Parse(file string, data []byte) (*Model, error) {
	var f File
	if err := yamlstrict.Decode(file, data, &f); err != nil {
		return nil, err
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("%s: key \"version\": cost-model version %d, want %d", file, f.Version, FormatVersion)
	}
	m := &Model{Name: f.Name, ops: l.ops}
	if err := m.apply(file, f.Costs); err != nil {
		return nil, err
	}
	var missing []string
	for _, o := range l.ops.Ops() {
		if m.Entries[o.Op].Unit == "" {
			missing = append(missing, o.Key)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: key \"costs\": no price for %s", file, strings.Join(missing, ", "))
	}
	return m, nil
}

// WithOverrides returns a copy of m with entries replaced; where names the
// overrides' origin in errors ("scenario.yaml: hosts.server.cost").
func (m *Model) WithOverrides(where string, over map[string]Entry) (*Model, error) {
	c := *m
	if err := c.apply(where, over); err != nil {
		return nil, err
	}
	return &c, nil
}

func (m *Model) apply(where string, costs map[string]Entry) error {
	names := make([]string, 0, len(costs))
	for k := range costs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		e := costs[name]
		op, ok := m.ops.Lookup(name)
		if !ok {
			return fmt.Errorf("%s: key \"costs.%s\": unknown operation; see docs/cost-model.md for the list", where, name)
		}
		switch e.Unit {
		case "ps", "ns", "us", "cycles":
		default:
			return fmt.Errorf("%s: key \"costs.%s.unit\": unit %q; expected ps, ns, us or cycles", where, name, e.Unit)
		}
		if e.Value < 0 {
			return fmt.Errorf("%s: key \"costs.%s.value\": negative price %v", where, name, e.Value)
		}
		if strings.TrimSpace(e.Source) == "" {
			return fmt.Errorf("%s: key \"costs.%s.source\": every price needs its source", where, name)
		}
		m.Entries[op] = e
	}
	return nil
}

// Prices converts the model to picoseconds per unit for a core running at
// ghz (cycles are converted at that rate).
func (m *Model) Prices(ghz float64) *sim.Prices {
	var p sim.Prices
	for op := range m.Entries {
		p[op] = m.PS(hw.CostOp(op), ghz)
	}
	return &p
}

// PS returns one op's price in picoseconds at ghz.
func (m *Model) PS(op hw.CostOp, ghz float64) int64 {
	e := m.Entries[op]
	var ps float64
	switch e.Unit {
	case "ps":
		ps = e.Value
	case "ns":
		ps = e.Value * 1e3
	case "us":
		ps = e.Value * 1e6
	case "cycles":
		if ghz <= 0 {
			ghz = 1
		}
		ps = e.Value * 1e3 / ghz
	}
	return int64(ps + 0.5)
}
