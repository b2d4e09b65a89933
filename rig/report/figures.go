// Package report holds the figures a run produces and writes them as a
// terminal table, JSON and Markdown.
package report

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Tree is a nested map of figures: inner nodes are Trees, leaves are
// float64. Paths are dotted ("server.nic.eth0.imissed").
type Tree map[string]any

// Set stores v at path, creating inner nodes. Setting a path through an
// existing leaf replaces the leaf.
func (t Tree) Set(path string, v float64) {
	segs := strings.Split(path, ".")
	n := t
	for _, s := range segs[:len(segs)-1] {
		next, ok := n[s].(Tree)
		if !ok {
			next = Tree{}
			n[s] = next
		}
		n = next
	}
	n[segs[len(segs)-1]] = v
}

// Sub returns the inner tree at path, creating it.
func (t Tree) Sub(path string) Tree {
	n := t
	for _, s := range strings.Split(path, ".") {
		next, ok := n[s].(Tree)
		if !ok {
			next = Tree{}
			n[s] = next
		}
		n = next
	}
	return n
}

// Lookup returns the node at path (a float64 or a Tree).
func (t Tree) Lookup(path []string) (any, bool) {
	var n any = t
	for _, s := range path {
		m, ok := n.(Tree)
		if !ok {
			return nil, false
		}
		n, ok = m[s]
		if !ok {
			return nil, false
		}
	}
	return n, true
}

// Figure is one flattened figure.
type Figure struct {
	Path  string
	Value float64
}

// Flatten returns every leaf with its dotted path, sorted by path.
func (t Tree) Flatten() []Figure {
	var out []Figure
	var walk func(prefix string, n Tree)
	walk = func(prefix string, n Tree) {
		for k, v := range n {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			switch v := v.(type) {
			case Tree:
				walk(p, v)
			case float64:
				out = append(out, Figure{p, v})
			}
		}
	}
	walk("", t)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// AddStruct flattens a statistics struct (or a slice or map of them) into
// the tree under prefix, naming fields by their json tags. Numbers become
// figures; fields tagged json:"-" and non-numeric fields are skipped.
func (t Tree) AddStruct(prefix string, v any) {
	t.addValue(prefix, reflect.ValueOf(v))
}

func (t Tree) addValue(path string, v reflect.Value) {
	if !v.IsValid() {
		return
	}
	if v.Type() == reflect.TypeOf(Tree{}) {
		for _, f := range v.Interface().(Tree).Flatten() {
			t.Set(join(path, f.Path), f.Value)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			t.addValue(path, v.Elem())
		}
	case reflect.Struct:
		ty := v.Type()
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				// Embedded without a tag: its fields belong to the outer
				// struct, as encoding/json treats them.
				t.addValue(path, v.Field(i))
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			t.addValue(join(path, name), v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			t.addValue(join(path, strconv.Itoa(i)), v.Index(i))
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			t.addValue(join(path, fmt.Sprint(k.Interface())), v.MapIndex(k))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		t.Set(path, float64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		t.Set(path, float64(v.Uint()))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			t.Set(path, f)
		}
	case reflect.Bool:
		if v.Bool() {
			t.Set(path, 1)
		} else {
			t.Set(path, 0)
		}
	}
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// Round rounds to a fixed number of significant decimals so that reports
// do not carry floating-point noise.
func Round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// Accumulate flattens a statistics struct as AddStruct does and adds each
// figure to the one already at the same path under prefix: the total of
// several processes' or instances' counters.
func (t Tree) Accumulate(prefix string, v any) {
	tmp := Tree{}
	tmp.AddStruct("", v)
	for _, f := range tmp.Flatten() {
		p := join(prefix, f.Path)
		old, _ := t.Lookup(strings.Split(p, "."))
		prev, _ := old.(float64)
		t.Set(p, prev+f.Value)
	}
}
