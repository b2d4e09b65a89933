// Package cost loads cost models: versioned data files in which every
// price Savanna charges for simulated work (a packet through a driver, a
// byte copied, a syscall, a byte compressed at a level) carries its value,
// its unit and its source. A default model is embedded; scenario files may
// name another file or override single entries per host.
//
// The prices are data, never constants in code (architecture invariant 4).
package cost

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
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

// models holds the embedded cost files: default.yaml and the frozen
// machine files a scenario names with cost.model (models.go).
//
//go:embed data/*.yaml
var models embed.FS

// FormatVersion is the cost-model file format this package reads.
const FormatVersion = 1

// Entry is one price.
type Entry struct {
	// Value is the price of one unit of the operation, in Unit.
	Value float64 `yaml:"value"`
	// Unit is ns, ps, us or cycles (cycles are converted at the clock
	// rate of the core that does the work), or bytes for an entry that
	// is a size a model reads (core_cache_bytes), never charged: its
	// price is 0 ps.
	Unit string `yaml:"unit"`
	// Source says where the figure comes from: a paper, a benchmark, a
	// measurement on a named machine. It must not be the seed figure the
	// price helps reproduce.
	Source string `yaml:"source"`
	// Uncertainty is relative and symmetric: the price is believed within
	// Value x (1 +- Uncertainty). 0 when not given; required (as a key,
	// 0 allowed) in a frozen file.
	Uncertainty float64 `yaml:"uncertainty"`
	// Spread is the coefficient of variation of a seeded, mean-1
	// multiplier drawn for each charge of the op on a core (sim.Core
	// SetSpread): service-time variability such as cache misses or
	// scheduler noise. 0, the default, draws nothing.
	Spread float64 `yaml:"spread"`
	// SpreadSource says where a non-zero Spread comes from.
	SpreadSource string `yaml:"spread_source"`
}

// Bounds of the per-op fields: an uncertainty above 1 would put the
// lower bound of a price below zero, and a coefficient of variation above
// 4 is a tail no service-time measurement we know of shows.
const (
	maxUncertainty = 1
	maxSpread      = 4
)

// File is a cost-model file.
type File struct {
	Version     int    `yaml:"version"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Frozen marks a machine file written before the figures it helps
	// reproduce were compared (docs/cost-model.md): every price must
	// then state its uncertainty.
	Frozen bool             `yaml:"frozen"`
	Costs  map[string]Entry `yaml:"costs"`
}

// Model is a validated cost model: an entry for every operation of the
// table it was read against.
type Model struct {
	Entries [hw.NumCostOps]Entry
	ops     *hw.CostTable
	name    string
	digest  string
}

// Name returns the model's name as its file gives it
// ("kunpeng920-2026.12").
func (m *Model) Name() string { return m.name }

// Digest returns the hex SHA-256 of the cost file's bytes as loaded,
// before any override (overrides are listed by whoever prints it).
func (m *Model) Digest() string { return m.digest }

// Uncertainty returns op's relative uncertainty, 0 when not given.
func (m *Model) Uncertainty(op hw.CostOp) float64 {
	if int(op) >= hw.NumCostOps {
		return 0
	}
	return m.Entries[op].Uncertainty
}

// Spread returns op's coefficient of variation per charge, 0 when none.
func (m *Model) Spread(op hw.CostOp) float64 {
	if int(op) >= hw.NumCostOps {
		return 0
	}
	return m.Entries[op].Spread
}

// Spreads returns every op's spread for a core (sim.Core.SetSpread), or
// nil when no op has one, so that a model without spread costs a core
// nothing.
func (m *Model) Spreads() *sim.Spread {
	var s sim.Spread
	any := false
	for op := range m.Entries {
		if v := m.Entries[op].Spread; v > 0 {
			s[op] = v
			any = true
		}
	}
	if !any {
		return nil
	}
	return &s
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
	doc, err := yamlstrict.Parse(file, data)
	if err != nil {
		return nil, err
	}
	var f File
	if err := yamlstrict.DecodeNode(file, doc, &f); err != nil {
		return nil, err
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("%s: key \"version\": cost-model version %d, want %d", file, f.Version, FormatVersion)
	}
	sum := sha256.Sum256(data)
	m := &Model{name: f.Name, digest: hex.EncodeToString(sum[:]), ops: l.ops}
	if err := m.apply(file, f.Costs, nodeLocator(file, doc)); err != nil {
		return nil, err
	}
	if f.Frozen {
		if err := requireUncertainty(file, doc, f.Costs); err != nil {
			return nil, err
		}
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
	if err := c.apply(where, over, nil); err != nil {
		return nil, err
	}
	return &c, nil
}

// apply validates and sets entries; at, when not nil, locates a key of
// the file ("costs.syscall.spread") for errors about the per-op fields.
func (m *Model) apply(where string, costs map[string]Entry, at locator) error {
	for _, name := range sortedNames(costs) {
		e := costs[name]
		op, ok := m.ops.Lookup(name)
		if !ok {
			return fmt.Errorf("%s: key \"costs.%s\": unknown operation; see docs/cost-model.md for the list", where, name)
		}
		switch e.Unit {
		case "ps", "ns", "us", "cycles", "bytes":
		default:
			return fmt.Errorf("%s: key \"costs.%s.unit\": unit %q; expected ps, ns, us, cycles or bytes (a size)", where, name, e.Unit)
		}
		if e.Value < 0 {
			return fmt.Errorf("%s: key \"costs.%s.value\": negative price %v", where, name, e.Value)
		}
		if strings.TrimSpace(e.Source) == "" {
			return fmt.Errorf("%s: key \"costs.%s.source\": every price needs its source", where, name)
		}
		if err := checkFields(where, name, e, at); err != nil {
			return err
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

// sortedNames returns the keys of costs in order, so that the first
// error of a file is always the same one.
func sortedNames(costs map[string]Entry) []string {
	names := make([]string, 0, len(costs))
	for k := range costs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
