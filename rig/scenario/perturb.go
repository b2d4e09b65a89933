package scenario

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CostOverride is one price a derived variant sets on one host, written
// as an entry of the host's cost.overrides would be.
type CostOverride struct {
	// Host is the host's name; Op the cost op's key.
	Host, Op string
	// Value, Unit and Source are the entry's; the rest is carried from
	// the price it replaces (an override replaces the whole entry, so a
	// moved price keeps its uncertainty and its spread).
	Value        float64
	Unit         string
	Source       string
	Uncertainty  float64
	Spread       float64
	SpreadSource string
}

// WithCostOverrides returns variant v with each override set under its
// host's cost.overrides (the section made where the host has none), by
// the machinery variants and sweep grids use: dotted keys set on a copy
// of v's document, which is then checked as a variant is. label names
// the derived variant in errors ("deflate_byte_l6 x0.75"). Simrun
// reproduce --sensitivity runs a scenario's variants so, with one price
// moved by its uncertainty.
func (s *Scenario) WithCostOverrides(v *Variant, label string, over []CostOverride) (*Variant, error) {
	vdoc := cloneNode(v.doc)
	root := vdoc.Content[0]
	names := append([]string(nil), v.Overrides...)
	for _, o := range over {
		if v.File.Hosts[o.Host] == nil {
			return nil, fmt.Errorf("%s: %s of variant %s: no host %q", v.path, label, v.Name, o.Host)
		}
		if strings.ContainsAny(o.Op, ".[]") || o.Op == "" {
			return nil, fmt.Errorf("%s: %s of variant %s: %q is not a cost op's key", v.path, label, v.Name, o.Op)
		}
		hk := "hosts." + o.Host
		line, col := locate(v.doc, hk)
		// setPath adds only the last key of a path: make the sections
		// the override sits in first, where the host has none.
		for _, key := range []string{hk + ".cost", hk + ".cost.overrides"} {
			if !present(vdoc, key) {
				empty := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				if err := setPath(root, override{path: key, value: empty, line: line, col: col}); err != nil {
					return nil, fmt.Errorf("%s: %s of variant %s: %s: %w", v.path, label, v.Name, key, err)
				}
			}
		}
		fields := map[string]any{"value": o.Value, "unit": o.Unit, "source": o.Source}
		if o.Uncertainty != 0 {
			fields["uncertainty"] = o.Uncertainty
		}
		if o.Spread != 0 || o.SpreadSource != "" {
			fields["spread"], fields["spread_source"] = o.Spread, o.SpreadSource
		}
		var entry yaml.Node
		if err := entry.Encode(fields); err != nil {
			return nil, fmt.Errorf("%s: %s of variant %s: %w", v.path, label, v.Name, err)
		}
		key := hk + ".cost.overrides." + o.Op
		if err := setPath(root, override{path: key, value: &entry, line: line, col: col}); err != nil {
			return nil, fmt.Errorf("%s: %s of variant %s: %s: %w", v.path, label, v.Name, key, err)
		}
		names = append(names, key)
	}
	wrap := func(err error) error { return fmt.Errorf("%s of variant %s: %w", label, v.Name, err) }
	return s.checkedVariant(v.path, v.Name, vdoc, names, wrap)
}
