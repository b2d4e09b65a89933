package scenario

import (
	"fmt"
	"math"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
)

// checkLimits walks a document and checks every key Limits names. It
// reads the nodes only (an integer that does not parse is left to the
// strict decoder, which names it), so that it runs before anything is
// built. The variants section is skipped: each variant's document is
// checked whole.
func checkLimits(file string, doc *yaml.Node) error {
	byKey := map[string][]Limit{}
	for _, l := range Limits() {
		byKey[l.Key] = append(byKey[l.Key], l)
	}
	var walk func(n, at *yaml.Node, shape, path string) error
	walk = func(n, at *yaml.Node, shape, path string) error {
		n = deref(n)
		if n == nil {
			return nil
		}
		for _, l := range byKey[shape] {
			if err := l.check(file, n, at, path); err != nil {
				return err
			}
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if err := walk(c, c, shape, path); err != nil {
					return err
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if shape == "" && k.Value == "variants" {
					for _, l := range byKey["variants"] {
						if err := l.check(file, deref(n.Content[i+1]), k, "variants"); err != nil {
							return err
						}
					}
					continue
				}
				seg := k.Value
				if shape == "hosts" {
					seg = "*"
				}
				if err := walk(n.Content[i+1], k, join(shape, seg), join(path, k.Value)); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if err := walk(c, c, shape+"[]", fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(doc, doc, "", "")
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// check applies the limit to the value n found at path; at is the node
// errors point at (the key, or the list item).
func (l Limit) check(file string, n, at *yaml.Node, path string) error {
	over := func(at *yaml.Node, path, value string) error {
		return &yamlstrict.Error{File: file, Line: at.Line, Col: at.Column, Key: path,
			Msg: fmt.Sprintf("%s, over the limit of %s (%s; docs/scenarios.md, Limits)", value, l.format(l.Max), l.Why)}
	}
	switch l.Measure {
	case Items:
		if (n.Kind == yaml.SequenceNode && int64(len(n.Content)) > l.Max) ||
			(n.Kind == yaml.MappingNode && int64(len(n.Content)/2) > l.Max) {
			count := len(n.Content)
			if n.Kind == yaml.MappingNode {
				count /= 2
			}
			return over(at, path, fmt.Sprintf("%d entries", count))
		}
	case Span:
		var d time.Duration
		if n.Kind == yaml.ScalarNode && n.Decode(&d) == nil && int64(d) > l.Max {
			return over(at, path, d.String())
		}
	case Value:
		if n.Kind == yaml.ScalarNode {
			if v, big := intValue(n); big || v > l.Max {
				return over(at, path, n.Value)
			}
			return nil
		}
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				c = deref(c)
				if v, big := intValue(c); big || v > l.Max {
					return over(c, fmt.Sprintf("%s[%d]", path, i), c.Value)
				}
			}
		}
	case Sum:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		var sum int64
		for _, c := range n.Content {
			v, big := intValue(deref(c))
			if big || v > l.Max {
				return nil // the Value limit on the same key names the item
			}
			if v > 0 {
				sum += v
			}
			if sum > l.Max {
				return over(at, path, fmt.Sprintf("a sum of more than %s", l.format(l.Max)))
			}
		}
	}
	return nil
}

// intValue reads an integer scalar; big is set for one too large for an
// int64 (above every limit). A value that is not an integer gives 0: the
// strict decoder refuses it with its own error.
func intValue(n *yaml.Node) (v int64, big bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	if n.Decode(&v) == nil {
		return v, false
	}
	// Beyond int64, or written as a float (1e20): yaml.v3 decodes a
	// whole float into an int where it fits.
	var f float64
	if n.Decode(&f) == nil && f > math.MaxInt64 {
		return 0, true
	}
	return 0, false
}

func (l Limit) format(v int64) string {
	if l.Measure == Span {
		return time.Duration(v).String()
	}
	return fmt.Sprint(v)
}
