package numa

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// HugepageConfig reserves hugepages per NUMA node, as writing
// /sys/devices/system/node/nodeN/hugepages/hugepages-2048kB/nr_hugepages
// (and -1048576kB) does on Linux. In a scenario file:
//
//	hugepages: {2MiB: [1024, 1024], 1GiB: [0, 0]}   # one count per node
//	hugepages: {2MiB: 512}                          # 512 on every node
//	hugepages: {2MiB: [512]}                        # the same
//
// A list gives one count per node in node order; a single count (alone or
// in a list) is what every node gets. A size that is left out reserves no
// pages of that size.
type HugepageConfig struct {
	// Pages2M are the 2 MiB pages reserved per node.
	Pages2M PageCounts `yaml:"2MiB" json:"2MiB"`
	// Pages1G are the 1 GiB pages reserved per node.
	Pages1G PageCounts `yaml:"1GiB" json:"1GiB"`
}

// PageCounts are hugepage counts per node; in YAML a list, or one number
// for every node.
type PageCounts []int64

// UnmarshalYAML implements yaml.Unmarshaler: a number is a one-count
// list.
func (p *PageCounts) UnmarshalYAML(n *yaml.Node) error {
	var counts []int64
	var err error
	if n.Kind == yaml.ScalarNode {
		var one int64
		err = n.Decode(&one)
		counts = []int64{one}
	} else {
		err = n.Decode(&counts)
	}
	if err != nil {
		return fmt.Errorf("%q: expected a page count, or a list of one per node", n.Value)
	}
	*p = counts
	return nil
}

// Validate checks what can be checked without the topology: no count is
// negative. Errors name the key ("2MiB[1]: -4 is negative"); the caller
// prefixes the path of the hugepages key itself.
func (c *HugepageConfig) Validate() error {
	for _, l := range []struct {
		key    string
		counts []int64
	}{{"2MiB", c.Pages2M}, {"1GiB", c.Pages1G}} {
		for i, n := range l.counts {
			if n < 0 {
				return fmt.Errorf("%s[%d]: %d is negative", l.key, i, n)
			}
		}
	}
	return nil
}

// perNode expands the config for n nodes, or names the key whose list has
// the wrong length.
func (c *HugepageConfig) perNode(n int) (p2m, p1g []int64, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	expand := func(key string, counts []int64) ([]int64, error) {
		out := make([]int64, n)
		switch len(counts) {
		case 0:
		case 1:
			for i := range out {
				out[i] = counts[0]
			}
		case n:
			copy(out, counts)
		default:
			return nil, fmt.Errorf("%s: %d counts for %d nodes (give one per node, or one for every node)", key, len(counts), n)
		}
		return out, nil
	}
	if p2m, err = expand("2MiB", c.Pages2M); err != nil {
		return nil, nil, err
	}
	if p1g, err = expand("1GiB", c.Pages1G); err != nil {
		return nil, nil, err
	}
	return p2m, p1g, nil
}

// WithHugepages returns a copy of t whose nodes reserve the pages cfg
// asks for; errors name the key ("hugepages.2MiB: ...") and a node whose
// memory the pages would exceed.
func (t *Topology) WithHugepages(cfg HugepageConfig) (*Topology, error) {
	p2m, p1g, err := cfg.perNode(len(t.Nodes))
	if err != nil {
		return nil, fmt.Errorf("hugepages.%w", err)
	}
	c := t.Clone()
	for i := range c.Nodes {
		n := &c.Nodes[i]
		n.Hugepages2M, n.Hugepages1G = p2m[i], p1g[i]
		if hp := hugeBytes(n.Hugepages2M, n.Hugepages1G); n.MemoryBytes > 0 && (hp < 0 || hp > n.MemoryBytes) {
			return nil, fmt.Errorf("hugepages: node %d: %d x 2 MiB + %d x 1 GiB pages exceed the node's %s of memory",
				n.ID, n.Hugepages2M, n.Hugepages1G, FormatSize(n.MemoryBytes))
		}
	}
	return c, nil
}
