package report

import (
	"fmt"
	"path"
	"strings"
)

// Filter selects figures by globs over their dotted paths, for simrun
// run --figures. A glob is split at its dots like the path; each part
// matches one name of the path as path.Match matches a file name (* any
// run of characters, ? one character, [a-z] a class, \ quotes), and a
// part that is ** matches any number of names, none included. A figure
// is selected when some glob matches its path within a variant
// (pktgen.rtt.p99_us) or its path with the variant in front
// (default.pktgen.rtt.p99_us), as expectations name it.
type Filter struct {
	globs [][]string
	src   []string
}

// NewFilter checks the globs' syntax. No globs selects every figure.
func NewFilter(globs []string) (*Filter, error) {
	f := &Filter{src: globs}
	for _, g := range globs {
		if strings.TrimSpace(g) == "" {
			return nil, fmt.Errorf("figure glob %q is empty", g)
		}
		parts := strings.Split(g, ".")
		for _, p := range parts {
			if p == "" {
				return nil, fmt.Errorf("figure glob %q has an empty name between dots", g)
			}
			if p == "**" {
				continue
			}
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("figure glob %q: %q is not a valid pattern (path.Match syntax)", g, p)
			}
		}
		f.globs = append(f.globs, parts)
	}
	return f, nil
}

// Globs returns the globs as given.
func (f *Filter) Globs() []string { return f.src }

// match reports whether glob matches the dotted names. It fills a table
// of which tails of the glob match which tails of the names, so that
// many ** cost no backtracking.
func match(glob, names []string) bool {
	// ok[i][j]: glob[i:] matches names[j:].
	ok := make([][]bool, len(glob)+1)
	for i := range ok {
		ok[i] = make([]bool, len(names)+1)
	}
	ok[len(glob)][len(names)] = true
	for i := len(glob) - 1; i >= 0; i-- {
		for j := len(names); j >= 0; j-- {
			if glob[i] == "**" {
				ok[i][j] = ok[i+1][j] || (j < len(names) && ok[i][j+1])
				continue
			}
			if j < len(names) {
				m, _ := path.Match(glob[i], names[j])
				ok[i][j] = m && ok[i+1][j+1]
			}
		}
	}
	return ok[0][0]
}

// matchOne reports whether glob i selects the figure at p of some
// variant.
func (f *Filter) matchOne(i int, p string, variants []string) bool {
	names := strings.Split(p, ".")
	if match(f.globs[i], names) {
		return true
	}
	for _, v := range variants {
		if match(f.globs[i], append([]string{v}, names...)) {
			return true
		}
	}
	return false
}

// Match reports whether the filter selects the figure at path p (within
// a variant) of a report with these variants.
func (f *Filter) Match(p string, variants []string) bool {
	if f == nil || len(f.globs) == 0 {
		return true
	}
	for i := range f.globs {
		if f.matchOne(i, p, variants) {
			return true
		}
	}
	return false
}

// WithFilter returns a copy of the report whose printed figure tree (the
// table, Markdown and JSON; the summary is left whole) holds only the
// figures f selects. A glob that selects no figure is an error naming
// it, so that a misspelt glob does not print an empty table.
func (r *Report) WithFilter(f *Filter) (*Report, error) {
	if f == nil || len(f.globs) == 0 {
		return r, nil
	}
	paths := r.allPaths()
	for i, g := range f.src {
		found := false
		for _, p := range paths {
			if f.matchOne(i, p, r.Variants) {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("--figures %q matches no figure (globs match dotted paths such as %s; * stays within one name, ** spans names)", g, example(paths))
		}
	}
	c := *r
	c.filter = f
	return &c, nil
}

func example(paths []string) string {
	if len(paths) == 0 {
		return "app.figure"
	}
	return paths[len(paths)/2]
}

// allPaths is every figure path of any variant, sorted.
func (r *Report) allPaths() []string {
	paths, _ := r.rows()
	return paths
}

// filteredFigures is the figure trees the filter selects.
func (r *Report) filteredFigures() map[string]Tree {
	if r.filter == nil {
		return r.Figures
	}
	out := map[string]Tree{}
	for _, v := range r.Variants {
		t := Tree{}
		for _, fig := range r.Figures[v].Flatten() {
			if r.filter.Match(fig.Path, r.Variants) {
				t.Set(fig.Path, fig.Value)
			}
		}
		out[v] = t
	}
	return out
}
