package cost

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
)

// locator finds the line and column of a dotted key path of the file
// being parsed; 0, 0 when absent.
type locator func(key string) (line, col int)

// nodeLocator locates keys of doc, a parsed cost file.
func nodeLocator(file string, doc *yaml.Node) locator {
	return func(key string) (int, int) {
		n := doc
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		line, col := 0, 0
		for _, part := range strings.Split(key, ".") {
			k, v := lookup(n, part)
			if k == nil {
				break
			}
			line, col, n = k.Line, k.Column, v
		}
		return line, col
	}
}

// lookup returns the key and value nodes of key in mapping n.
func lookup(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// fieldError is an error about one per-op field, located when at can.
func fieldError(where string, at locator, key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if at != nil {
		line, col := at(key)
		return &yamlstrict.Error{File: where, Line: line, Col: col, Key: key, Msg: msg}
	}
	return fmt.Errorf("%s: key %q: %s", where, key, msg)
}

// checkFields validates an entry's uncertainty and spread.
func checkFields(where, name string, e Entry, at locator) error {
	base := "costs." + name + "."
	if math.IsNaN(e.Uncertainty) || e.Uncertainty < 0 || e.Uncertainty > maxUncertainty {
		return fieldError(where, at, base+"uncertainty", "uncertainty %v; want a relative figure from 0 to %d (0.25 means the price is believed within value x (1 +- 0.25))", e.Uncertainty, maxUncertainty)
	}
	if math.IsNaN(e.Spread) || e.Spread < 0 || e.Spread > maxSpread {
		return fieldError(where, at, base+"spread", "spread %v; want a coefficient of variation from 0 to %d", e.Spread, maxSpread)
	}
	hasSource := strings.TrimSpace(e.SpreadSource) != ""
	switch {
	case e.Spread > 0 && !hasSource:
		return fieldError(where, at, base+"spread_source", "a spread needs its own spread_source")
	case e.Spread == 0 && hasSource:
		return fieldError(where, at, base+"spread_source", "spread_source without a spread above 0")
	}
	return nil
}

// requireUncertainty checks that a frozen file states every price's
// uncertainty (0 is a statement; an absent key is not).
func requireUncertainty(file string, doc *yaml.Node, costs map[string]Entry) error {
	at := nodeLocator(file, doc)
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	_, cn := lookup(root, "costs")
	var missing []string
	for _, name := range sortedNames(costs) {
		_, en := lookup(cn, name)
		if k, _ := lookup(en, "uncertainty"); k == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		line, col := at("costs." + missing[0])
		return &yamlstrict.Error{File: file, Line: line, Col: col, Key: "costs." + missing[0] + ".uncertainty",
			Msg: fmt.Sprintf("a frozen file states every price's uncertainty; missing for %s", strings.Join(missing, ", "))}
	}
	return nil
}
