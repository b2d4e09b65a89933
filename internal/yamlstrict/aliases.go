package yamlstrict

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// MaxAliasNodes is the most nodes a document may reach through aliases,
// counted with every alias expanded (an alias inside an alias counts
// again each time it is reached). yaml.v3 bounds the same thing when it
// decodes (its allowedAliasRatio), but the strict checker walks the tree
// first, and a "billion laughs" of a few kilobytes expands to billions
// of nodes; this bound is applied before any walk. A scenario or cost
// file written by hand reaches a few hundred nodes through aliases at
// most.
const MaxAliasNodes = 10000

// CheckAliases counts the nodes reached through aliases below node and
// refuses a document that reaches more than max, naming the alias (file
// and line) at which the count passed the limit. An alias cycle (YAML
// allows an anchor to contain an alias to itself) counts without end and
// is refused the same way.
func CheckAliases(file string, node *yaml.Node, max int) error {
	c := aliasCounter{max: max}
	if c.walk(node, nil) {
		return c.err(file)
	}
	return nil
}

type aliasCounter struct {
	max, n int
	// at is the outermost alias through which the limit was passed.
	at *yaml.Node
}

// walk visits n; via is the outermost alias n was reached through (nil
// when it is reached directly). It reports whether the limit was passed.
func (c *aliasCounter) walk(n *yaml.Node, via *yaml.Node) bool {
	if n == nil {
		return false
	}
	if via != nil {
		c.n++
		if c.n > c.max {
			c.at = via
			return true
		}
	}
	if n.Kind == yaml.AliasNode {
		if via == nil {
			via = n
		}
		return c.walk(n.Alias, via)
	}
	for _, ch := range n.Content {
		if c.walk(ch, via) {
			return true
		}
	}
	return false
}

func (c *aliasCounter) err(file string) error {
	return &Error{File: file, Line: c.at.Line, Col: c.at.Column, kind: kindAliases,
		Msg: fmt.Sprintf("alias *%s: the document reaches more than %d nodes through aliases (the limit, against alias bombs); write the values out or use fewer aliases", c.at.Value, c.max)}
}
