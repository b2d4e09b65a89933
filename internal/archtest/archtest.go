// Package archtest checks the module's dependency rule (docs/architecture.md,
// invariant 1): the product (stack, zlibshim, apps) imports only the
// hardware contracts (hw), never the models (sim) that stand in for the
// hardware, nor the rig and commands that choose an implementation; the
// models never import the product they are used to check. The rule table
// is in the package's spec (archtest_test.go); this file reads the
// import graph with `go list` and finds the chains that break a rule.
//
// Only non-test imports count: a spec of the product may well run it on a
// model (that is what the models are for).
package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Graph is the module's import graph: packages by their path relative to
// the module ("stack/tcp", "hw", "sim"), each with its direct non-test
// imports of other packages of the module.
type Graph struct {
	Module  string
	Imports map[string][]string
	// sources are the listed packages' folders and Go files.
	sources []string
}

// Load runs `go list` in the module that contains dir and returns its
// import graph.
func Load(dir string) (*Graph, error) {
	gomod, err := goCmd(dir, "env", "GOMOD")
	if err != nil {
		return nil, err
	}
	gomod = strings.TrimSpace(gomod)
	if gomod == "" || gomod == "/dev/null" {
		return nil, fmt.Errorf("archtest: %s is not inside a module", dir)
	}
	root := filepath.Dir(gomod)
	mod, err := goCmd(root, "list", "-m")
	if err != nil {
		return nil, err
	}
	// -e: a package another change left broken still lists its imports.
	out, err := goCmd(root, "list", "-e", "-json=ImportPath,Imports,Dir,GoFiles", "./...")
	if err != nil {
		return nil, err
	}
	g, err := parseList(strings.TrimSpace(mod), strings.NewReader(out))
	if err != nil {
		return nil, err
	}
	touchSources(root, g.sources)
	return g, nil
}

// touchSources stats the module's root, every package's folder and its Go
// files. go test caches a passing result by the files a test opened or
// statted, and `go list` runs in a child process it does not see; without
// this, a spec that passed would stay passed (cached) after a change
// added a forbidden import.
func touchSources(root string, files []string) {
	_, _ = os.Stat(root)
	for _, f := range files {
		_, _ = os.Stat(f)
	}
}

func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("archtest: go %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// parseList reads the JSON stream of `go list -json`.
func parseList(module string, r io.Reader) (*Graph, error) {
	g := &Graph{Module: module, Imports: map[string][]string{}}
	dec := json.NewDecoder(r)
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Dir        string
			GoFiles    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("archtest: go list output: %w", err)
		}
		rel, ok := g.rel(p.ImportPath)
		if !ok {
			continue
		}
		if p.Dir != "" {
			g.sources = append(g.sources, p.Dir)
			for _, f := range p.GoFiles {
				g.sources = append(g.sources, filepath.Join(p.Dir, f))
			}
		}
		imps := []string{}
		for _, imp := range p.Imports {
			if r, ok := g.rel(imp); ok {
				imps = append(imps, r)
			}
		}
		g.Imports[rel] = imps
	}
	return g, nil
}

func (g *Graph) rel(importPath string) (string, bool) {
	if importPath == g.Module {
		return ".", true
	}
	if r, ok := strings.CutPrefix(importPath, g.Module+"/"); ok {
		return r, true
	}
	return "", false
}

// Packages returns the graph's packages, sorted.
func (g *Graph) Packages() []string {
	ps := make([]string, 0, len(g.Imports))
	for p := range g.Imports {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// Match reports whether pkg matches one of the patterns: "sim/..." is sim
// and everything below it, "hw" is hw alone.
func Match(pkg string, patterns []string) bool {
	for _, p := range patterns {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if pkg == base || strings.HasPrefix(pkg, base+"/") {
				return true
			}
		} else if pkg == p {
			return true
		}
	}
	return false
}

// Select returns the packages matching patterns and not except.
func (g *Graph) Select(patterns, except []string) []string {
	var out []string
	for _, p := range g.Packages() {
		if Match(p, patterns) && !Match(p, except) {
			out = append(out, p)
		}
	}
	return out
}

// paths returns, for every package reachable from pkg (pkg excluded), a
// shortest import chain from pkg to it (breadth first, imports in sorted
// order, so chains are deterministic).
func (g *Graph) paths(pkg string) map[string][]string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		imps := append([]string(nil), g.Imports[p]...)
		sort.Strings(imps)
		for _, q := range imps {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	out := map[string][]string{}
	for q := range prev {
		if q == pkg {
			continue
		}
		var chain []string
		for p := q; p != ""; p = prev[p] {
			chain = append([]string{p}, chain...)
		}
		out[q] = chain
	}
	return out
}

// Closure returns every package reachable from the packages given,
// themselves included.
func (g *Graph) Closure(pkgs []string) map[string]bool {
	out := map[string]bool{}
	for _, p := range pkgs {
		out[p] = true
		for q := range g.paths(p) {
			out[q] = true
		}
	}
	return out
}

// Violation is one forbidden dependency and the chain of imports that
// makes it.
type Violation struct {
	From, To string
	Chain    []string
}

func (v Violation) String() string { return strings.Join(v.Chain, " -> ") }

// Forbidden returns, for each of the from packages, every package
// matching to that it imports directly or transitively, with a shortest
// chain.
func (g *Graph) Forbidden(from []string, to []string) []Violation {
	var out []Violation
	for _, p := range from {
		ps := g.paths(p)
		var reached []string
		for q := range ps {
			if Match(q, to) {
				reached = append(reached, q)
			}
		}
		sort.Strings(reached)
		for _, q := range reached {
			out = append(out, Violation{From: p, To: q, Chain: ps[q]})
		}
	}
	return out
}

// Report renders violations one chain per line.
func Report(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "    %s\n", v)
	}
	return b.String()
}
