package calibrate

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/sim/cost"
)

// DefaultModel returns the default model's entries and the order of its
// operations in its file (sim/cost's embedded default).
func DefaultModel() (map[string]cost.Entry, []string, error) {
	return parseModel(cost.DefaultBytes())
}

// parseModel reads a cost file's entries and their order.
func parseModel(data []byte) (map[string]cost.Entry, []string, error) {
	var f cost.File
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("default cost model: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("default cost model: %w", err)
	}
	var order []string
	if len(doc.Content) == 1 {
		top := doc.Content[0]
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value != "costs" {
				continue
			}
			c := top.Content[i+1]
			for j := 0; j+1 < len(c.Content); j += 2 {
				order = append(order, c.Content[j].Value)
			}
		}
	}
	if len(order) != len(f.Costs) {
		return nil, nil, fmt.Errorf("default cost model: %d operations in order, %d priced", len(order), len(f.Costs))
	}
	return f.Costs, order, nil
}

// File is what Write writes.
type File struct {
	Name        string
	Description string
	Prices      []Price
	// Header is the comment at the top of the file.
	Header string
}

// NewFile names and describes the calibrated model of r.
func NewFile(r *Result, prices []Price) *File {
	measured, noisy := 0, 0
	for _, p := range prices {
		if p.Measured {
			measured++
			if p.Noisy {
				noisy++
			}
		}
	}
	host := strings.NewReplacer(" ", "-", "(", "", ")", "", "@", "").Replace(strings.ToLower(r.Machine.CPU))
	f := &File{Name: "calibrated-" + host + "-" + r.Machine.Date, Prices: prices}
	var d strings.Builder
	if r.Forced() {
		f.Name += "-noisy"
		fmt.Fprintf(&d, "NOISY: measured on a busy machine and written with --force (%s). ", strings.Join(r.Busy, "; "))
	}
	fmt.Fprintf(&d, "Measured by simrun calibrate on %s: %d runs per benchmark%s. %d of %d prices measured here (%d of them noisy: spread over %.0f%%%s); the others keep the default model's prices, each source saying why. Machine load before: %s; after: %s.",
		r.Machine, r.Runs, map[bool]string{true: " (--quick: a fifth of the time)", false: ""}[r.Quick],
		measured, len(prices), noisy, 100*r.Rule.MaxSpread, map[bool]string{true: " or machine busy", false: ""}[r.Forced()],
		r.Before, r.After)
	f.Description = d.String()
	f.Header = "Cost model measured on this machine by `simrun calibrate` (docs/calibration.md).\n" +
		"Every price has value, unit and source; measured prices are in ns, their\n" +
		"uncertainty is propagated from the runs' spread (interquartile range over\n" +
		"median), and their source names the benchmark, its median and spread\n" +
		"over the runs and the machine;\n" +
		"prices marked # noisy spread more than the limit or come from a busy machine."
	return f
}

// Write writes f as a cost-model file (version 1, docs/cost-model.md).
func (f *File) Write(w io.Writer) error {
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
	costs := &yaml.Node{Kind: yaml.MappingNode}
	for _, p := range f.Prices {
		key := str(p.Op)
		val := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{
			str("value"), {Kind: yaml.ScalarNode, Value: strconv.FormatFloat(p.Entry.Value, 'f', -1, 64)},
			str("unit"), str(p.Entry.Unit),
		}}
		num := func(v float64) *yaml.Node {
			return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v, 'f', -1, 64)}
		}
		if p.Measured || p.Entry.Uncertainty > 0 {
			val.Content = append(val.Content, str("uncertainty"), num(p.Entry.Uncertainty))
		}
		if p.Entry.Spread > 0 {
			val.Content = append(val.Content, str("spread"), num(p.Entry.Spread),
				str("spread_source"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: p.Entry.SpreadSource})
		}
		val.Content = append(val.Content, str("source"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: p.Entry.Source})
		if p.Noisy {
			key.HeadComment = fmt.Sprintf("noisy: spread %.1f%%", 100*p.Spread)
		}
		costs.Content = append(costs.Content, key, val)
	}
	top := &yaml.Node{Kind: yaml.MappingNode, HeadComment: f.Header, Content: []*yaml.Node{
		str("version"), {Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(cost.FormatVersion)},
		str("name"), str(f.Name),
		str("description"), {Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: f.Description},
		str("costs"), costs,
	}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}}); err != nil {
		return fmt.Errorf("cost file: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("cost file: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}
