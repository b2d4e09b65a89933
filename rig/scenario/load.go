package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/yamlstrict"
)

// DefaultVariant is the name of the only variant of a file without
// variants.
const DefaultVariant = "default"

// Scenario is a loaded, validated scenario file with its variants
// expanded.
type Scenario struct {
	// Path is the file's path as given; errors name it.
	Path string
	// Hash is the SHA-256 of the file's bytes, in hex.
	Hash string
	// File is the file as written, without overrides.
	File *File
	// Variants are in the order the file lists them.
	Variants []*Variant

	doc *yaml.Node
	// sweep is the file's sweep expanded (sweep.go), nil without one.
	sweep *SweepPlan
	// dir and allowed are the folders (resolved) the files the scenario
	// names may be read from (ResolveFile).
	dir     string
	allowed []string
}

// Variant is the file with one variant's overrides applied.
type Variant struct {
	Name string
	File *File
	// Overrides are the dotted paths the variant sets, in file order.
	Overrides []string

	doc  *yaml.Node
	path string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Load reads and validates a scenario file.
func Load(path string) (*Scenario, error) { return LoadWith(path, Options{}) }

// LoadWith is Load with options. A file larger than MaxFileBytes is
// refused without reading it further.
func LoadWith(path string, opts Options) (*Scenario, error) {
	data, err := readLimited(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ParseWith(path, data, opts)
}

// Parse validates a scenario file's bytes; path names it in errors.
func Parse(path string, data []byte) (*Scenario, error) { return ParseWith(path, data, Options{}) }

// ParseWith is Parse with options.
func ParseWith(path string, data []byte, opts Options) (*Scenario, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the limit of %d (MaxFileBytes; docs/scenarios.md, Limits)", path, len(data), MaxFileBytes)
	}
	dir, allowed, err := folders(path, opts.AllowPaths)
	if err != nil {
		return nil, err
	}
	// yamlstrict.Parse bounds the nodes reached through aliases before
	// anything walks the tree.
	doc, err := yamlstrict.Parse(path, data)
	if err != nil {
		return nil, err
	}
	// The limits are checked on the nodes before the strict decoder
	// decodes them: decoding a list of a million pages costs what the
	// limit is there to refuse.
	if err := checkLimits(path, doc); err != nil {
		return nil, err
	}
	var f File
	if err := yamlstrict.DecodeNode(path, doc, &f); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	s := &Scenario{Path: path, Hash: hex.EncodeToString(sum[:]), File: &f, doc: doc, dir: dir, allowed: allowed}
	if err := validate(path, doc, &f); err != nil {
		return nil, err
	}
	if err := s.checkFiles(path, doc, &f); err != nil {
		return nil, err
	}
	vars, err := variantOverrides(path, &f.Variants)
	if err != nil {
		return nil, err
	}
	if len(vars) == 0 {
		s.Variants = []*Variant{{Name: DefaultVariant, File: &f, doc: doc, path: path}}
		if err := s.expandSweep(path, &f); err != nil {
			return nil, err
		}
		return s, nil
	}
	for _, v := range vars {
		vdoc := cloneNode(doc)
		var names []string
		for _, o := range v.overrides {
			if err := setPath(vdoc.Content[0], o); err != nil {
				return nil, &yamlstrict.Error{File: path, Line: o.line, Col: o.col,
					Key: "variants." + v.name + "." + o.path, Msg: err.Error()}
			}
			names = append(names, o.path)
		}
		if err := yamlstrict.CheckAliases(path, vdoc, yamlstrict.MaxAliasNodes); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.name, err)
		}
		if err := checkLimits(path, vdoc); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.name, err)
		}
		var vf File
		if err := yamlstrict.DecodeNode(path, vdoc, &vf); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.name, err)
		}
		if err := validate(path, vdoc, &vf); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.name, err)
		}
		if err := s.checkFiles(path, vdoc, &vf); err != nil {
			return nil, fmt.Errorf("variant %s: %w", v.name, err)
		}
		s.Variants = append(s.Variants, &Variant{Name: v.name, File: &vf, Overrides: names, doc: vdoc, path: path})
	}
	if err := s.expandSweep(path, &f); err != nil {
		return nil, err
	}
	return s, nil
}

// checkFiles resolves every file a (variant's) document names, so that
// validate refuses one outside the allowed folders at its key. The cost
// file is the only one: captures are written into --out under names made
// of identifiers.
func (s *Scenario) checkFiles(path string, doc *yaml.Node, f *File) error {
	for _, hn := range sortedHostNames(f) {
		c := f.Hosts[hn].Cost
		if c == nil {
			continue
		}
		if err := checkCostModel(path, doc, "hosts."+hn+".cost", c); err != nil {
			return err
		}
		if c.File == "" {
			continue
		}
		if _, err := s.ResolveFile(c.File); err != nil {
			key := "hosts." + hn + ".cost.file"
			line, col := locate(doc, key)
			return &yamlstrict.Error{File: path, Line: line, Col: col, Key: key, Msg: err.Error()}
		}
	}
	return nil
}

// Errorf returns an error located at key path key of the file as
// written (the nearest existing parent if the key itself is absent).
func (s *Scenario) Errorf(key, format string, args ...any) error {
	line, col := locate(s.doc, key)
	return &yamlstrict.Error{File: s.Path, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Errorf returns an error located at key path key of the variant's
// document (the nearest existing parent if the key itself is absent).
func (v *Variant) Errorf(key, format string, args ...any) error {
	line, col := locate(v.doc, key)
	return &yamlstrict.Error{File: v.path, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Decode decodes the node found at key strictly into out, with errors
// located in the file.
func (v *Variant) Decode(key string, node *yaml.Node, out any) error {
	return yamlstrict.DecodeNodeAt(v.path, key, node, out)
}

// Seed returns the variant's seed (default 1).
func (v *Variant) Seed() uint64 {
	if v.File.Seed == nil {
		return 1
	}
	return *v.File.Seed
}

type variantSpec struct {
	name      string
	overrides []override
}

type override struct {
	path      string
	value     *yaml.Node
	line, col int
}

func variantOverrides(file string, n *yaml.Node) ([]variantSpec, error) {
	if n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, &yamlstrict.Error{File: file, Line: n.Line, Col: n.Column, Key: "variants", Msg: "expected a mapping of variant name to overrides"}
	}
	var out []variantSpec
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !identRE.MatchString(k.Value) {
			return nil, &yamlstrict.Error{File: file, Line: k.Line, Col: k.Column, Key: "variants." + k.Value,
				Msg: "variant names are identifiers (letters, digits, _), since expectations name them"}
		}
		spec := variantSpec{name: k.Value}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			out = append(out, spec)
			continue
		}
		if v.Kind != yaml.MappingNode {
			return nil, &yamlstrict.Error{File: file, Line: v.Line, Col: v.Column, Key: "variants." + k.Value,
				Msg: "expected a mapping of dotted key path to value, such as {hosts.server.stack.kind: kernel}"}
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			pk, pv := v.Content[j], v.Content[j+1]
			spec.overrides = append(spec.overrides, override{path: pk.Value, value: pv, line: pk.Line, col: pk.Column})
		}
		out = append(out, spec)
	}
	return out, nil
}

// splitPath splits "hosts.client.apps[0].clients" or "links.0.loss" into
// segments; list indices become separate numeric segments.
func splitPath(p string) []string {
	var segs []string
	for _, part := range strings.Split(p, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 || !strings.HasSuffix(part, "]") {
				break
			}
			if i > 0 {
				segs = append(segs, part[:i])
			}
			idx := part[i+1 : len(part)-1]
			part = ""
			if j := strings.Index(idx, "]["); j >= 0 {
				segs = append(segs, idx[:j])
				part = "[" + idx[j+2:] + "]"
				continue
			}
			segs = append(segs, idx)
			break
		}
		if part != "" {
			segs = append(segs, part)
		}
	}
	return segs
}

// setPath replaces (or adds, in a mapping) the node at the override's
// path. The key takes the override's position, so that errors about the
// new value point at the variant that set it.
func setPath(root *yaml.Node, o override) error {
	path, value := o.path, o.value
	segs := splitPath(path)
	if len(segs) == 0 {
		return fmt.Errorf("empty key path")
	}
	n := root
	for i, seg := range segs {
		last := i == len(segs)-1
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					if last {
						n.Content[j].Line, n.Content[j].Column = o.line, o.col
						n.Content[j+1] = cloneNode(value)
					}
					n = n.Content[j+1]
					found = true
					break
				}
			}
			if !found {
				if !last {
					return fmt.Errorf("no key %q at %s", seg, strings.Join(segs[:i], "."))
				}
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg, Line: o.line, Column: o.col}
				n.Content = append(n.Content, key, cloneNode(value))
			}
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return fmt.Errorf("%q is not an index of the list at %s (it has %d items)", seg, strings.Join(segs[:i], "."), len(n.Content))
			}
			if last {
				n.Content[idx] = cloneNode(value)
			}
			n = n.Content[idx]
		default:
			return fmt.Errorf("%s is not a mapping or a list", strings.Join(segs[:i], "."))
		}
	}
	return nil
}

// locate finds the line and column of a key path in a document, falling
// back to the nearest existing parent.
func locate(doc *yaml.Node, path string) (int, int) {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line, col := n.Line, n.Column
	for _, seg := range splitPath(path) {
		switch n.Kind {
		case yaml.MappingNode:
			next := (*yaml.Node)(nil)
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					line, col = n.Content[j].Line, n.Content[j].Column
					next = n.Content[j+1]
					break
				}
			}
			if next == nil {
				return line, col
			}
			n = next
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(n.Content) {
				return line, col
			}
			n = n.Content[idx]
			line, col = n.Line, n.Column
		default:
			return line, col
		}
	}
	return line, col
}

// present reports whether a document sets the key path to a value other
// than null, to tell a key written as 0 from one left out.
func present(doc *yaml.Node, path string) bool {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, seg := range splitPath(path) {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			next = mapValue(n, seg)
		case yaml.SequenceNode:
			if idx, err := strconv.Atoi(seg); err == nil && idx >= 0 && idx < len(n.Content) {
				next = n.Content[idx]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return !(n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = cloneNode(ch)
		}
	}
	return &c
}
