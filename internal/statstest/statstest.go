// Package statstest checks a model's ResetStats by one rule, for the
// specs of every package that has statistics: after a reset every
// counter is zero, every gauge kept its value, and peaks (which only
// their package knows the gauges of) are left to the caller. It walks
// the statistics rather than naming their fields, so that a counter
// added later and forgotten by ResetStats fails the spec.
package statstest

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
)

// Leaves flattens a statistics value into its leaf fields by path
// ("Devices[0].Engines[1].Busy"); embedded structs add no element, so
// paths read as the JSON does. Unexported fields are left out.
func Leaves(v any) map[string]any {
	out := map[string]any{}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			t := v.Type()
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				p := path
				if !f.Anonymous {
					if p != "" {
						p += "."
					}
					p += f.Name
				}
				walk(p, v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		default:
			out[path] = v.Interface()
		}
	}
	walk("", reflect.ValueOf(v))
	return out
}

var indices = regexp.MustCompile(`\[\d+\]`)

// Name is a leaf's path without its indices ("Devices.Engines.Busy"):
// the name gauge and peak lists use.
func Name(path string) string { return indices.ReplaceAllString(path, "") }

// Problems compares statistics before and after a reset by the rule and
// returns what breaks it, sorted: a counter not zero, a gauge changed,
// the shape changed, or a listed name that no leaf has (so that a
// renamed field does not silently drop its check). Peaks are only
// checked to exist.
func Problems(before, after any, gauges, peaks []string) []string {
	b, a := Leaves(before), Leaves(after)
	var out []string
	if len(a) != len(b) {
		out = append(out, fmt.Sprintf("the reset changed the shape of the stats: %d leaves before, %d after", len(b), len(a)))
	}
	kind := map[string]string{}
	for _, g := range gauges {
		kind[g] = "gauge"
	}
	for _, p := range peaks {
		kind[p] = "peak"
	}
	seen := map[string]bool{}
	for path, v := range a {
		name := Name(path)
		seen[name] = true
		switch kind[name] {
		case "gauge":
			if !reflect.DeepEqual(v, b[path]) {
				out = append(out, fmt.Sprintf("gauge %s changed from %v to %v", path, b[path], v))
			}
		case "peak":
		default:
			if !reflect.ValueOf(v).IsZero() {
				out = append(out, fmt.Sprintf("counter %s not reset: %v", path, v))
			}
		}
	}
	for name := range kind {
		if !seen[name] {
			out = append(out, "no field "+name)
		}
	}
	sort.Strings(out)
	return out
}
