// Package yamlstrict decodes YAML into Go structs strictly: an unknown key,
// a value of the wrong type or a malformed document is an error that names
// the file, line, column and key path, and says what was expected.
// Scenario files and cost-model files both load through it, so both give
// the same errors.
package yamlstrict

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Error is a problem at one place of a YAML document.
type Error struct {
	File      string
	Line, Col int
	// Key is the dotted path of the key at fault ("hosts.server.nics[0].speed").
	Key string
	Msg string
	// kind sorts the error for Opaque.
	kind errKind
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": key %q", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Parse parses data into a document node, with errors that name the
// file. A document that reaches more than MaxAliasNodes nodes through
// aliases is refused (CheckAliases).
func Parse(file string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := yamlErrorLine(err)
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
		return nil, &Error{File: file, Line: line, Msg: msg, kind: kindSyntax}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &Error{File: file, Msg: "empty document", kind: kindEmpty}
	}
	if err := CheckAliases(file, &doc, MaxAliasNodes); err != nil {
		return nil, err
	}
	return &doc, nil
}

// Decode parses data and decodes it into out (a pointer to a struct),
// rejecting unknown keys and ill-typed values.
func Decode(file string, data []byte, out any) error {
	doc, err := Parse(file, data)
	if err != nil {
		return err
	}
	return DecodeNode(file, doc, out)
}

// DecodeNode decodes an already parsed node into out, strictly.
func DecodeNode(file string, node *yaml.Node, out any) error {
	return DecodeNodeAt(file, "", node, out)
}

// DecodeNodeAt decodes a node found at key path path of a larger document
// (errors name keys below that path), strictly.
func DecodeNodeAt(file, path string, node *yaml.Node, out any) error {
	if node.Kind == yaml.DocumentNode && len(node.Content) > 0 {
		node = node.Content[0]
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("yamlstrict: decode into non-pointer %T", out)
	}
	if err := check(file, path, node, rv.Type().Elem()); err != nil {
		return err
	}
	if err := node.Decode(out); err != nil {
		return &Error{File: file, Line: node.Line, Col: node.Column, Key: path, Msg: strings.TrimPrefix(err.Error(), "yaml: "), kind: kindType}
	}
	return nil
}

var (
	durationType  = reflect.TypeOf(time.Duration(0))
	nodeType      = reflect.TypeOf(yaml.Node{})
	unmarshalType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// check walks node against t and reports the first unknown key or
// ill-typed scalar.
func check(file, path string, node *yaml.Node, t reflect.Type) error {
	if node.Kind == yaml.AliasNode {
		node = node.Alias
	}
	if t == nodeType {
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalType) {
		// A type that decodes itself is checked by decoding it, so that
		// its error is located like every other.
		if err := node.Decode(reflect.New(t).Interface()); err != nil {
			return &Error{File: file, Line: node.Line, Col: node.Column, Key: path, Msg: strings.TrimPrefix(err.Error(), "yaml: "), kind: kindType}
		}
		return nil
	}
	if t.Implements(unmarshalType) {
		return nil
	}
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return nil
	}
	where := func(msg string, args ...any) error {
		return &Error{File: file, Line: node.Line, Col: node.Column, Key: path, Msg: fmt.Sprintf(msg, args...), kind: kindType}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(file, path, node, t.Elem())
	case reflect.Interface:
		return nil
	case reflect.Struct:
		if node.Kind != yaml.MappingNode {
			return where("expected a mapping, found %s", describe(node))
		}
		fields := structFields(t)
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			f, ok := fields[k.Value]
			kp := join(path, k.Value)
			if !ok {
				return &Error{File: file, Line: k.Line, Col: k.Column, Key: kp, kind: kindUnknownKey,
					Msg: "unknown key; expected one of: " + strings.Join(sortedKeys(fields), ", ")}
			}
			if err := check(file, kp, v, f.Type); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if node.Kind != yaml.MappingNode {
			return where("expected a mapping, found %s", describe(node))
		}
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			if err := check(file, join(path, k.Value), v, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if node.Kind != yaml.SequenceNode {
			return where("expected a list, found %s", describe(node))
		}
		for i, v := range node.Content {
			if err := check(file, fmt.Sprintf("%s[%d]", path, i), v, t.Elem()); err != nil {
				return err
			}
		}
		return nil
	}
	if node.Kind != yaml.ScalarNode {
		return where("expected %s, found %s", kindName(t), describe(node))
	}
	probe := reflect.New(t)
	if err := node.Decode(probe.Interface()); err != nil {
		return where("expected %s, found %q", kindName(t), node.Value)
	}
	return nil
}

// structFields maps YAML keys to fields, following yaml tags and inlined
// structs.
func structFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range structFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

func sortedKeys(m map[string]reflect.StructField) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

func kindName(t reflect.Type) string {
	if t == durationType {
		return "a duration such as 10us or 2s"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return t.String()
}

// yamlErrorLine pulls the line out of a yaml.v3 syntax error ("yaml: line
// 3: ..."), or returns 0.
func yamlErrorLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	var line int
	if _, scanErr := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); scanErr == nil {
		return line
	}
	return 0
}
