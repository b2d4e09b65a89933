// Package expect evaluates a scenario's expectations: boolean expressions
// over the figures of its variants, written in expr-lang
// (github.com/expr-lang/expr), such as
//
//	lstack.redis_benchmark.SET.rps > kernel.redis_benchmark.SET.rps * 1.5
//
// An expectation that names a figure that does not exist is an error, not
// a failure and never a pass. A failed expectation reports the values of
// both sides of its comparison and of every figure it names.
package expect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/savanna-sim/savanna/rig/report"
)

// Result is the outcome of one expectation.
type Result struct {
	Expr string `json:"expr"`
	Held bool   `json:"held"`
	// Detail gives the values behind the verdict.
	Detail string `json:"detail"`
}

// Evaluate checks every expectation against env (variant name to its
// figures). It returns an error, naming the expectation, for one that
// cannot be evaluated: a syntax error, an unknown figure, a non-boolean
// result.
func Evaluate(exprs []string, env map[string]report.Tree) ([]Result, error) {
	vars := make(map[string]any, len(env))
	for k, v := range env {
		vars[k] = treeToMap(v)
	}
	out := make([]Result, 0, len(exprs))
	for i, src := range exprs {
		r, err := evaluateOne(src, env, vars)
		if err != nil {
			return nil, fmt.Errorf("expect[%d] %q: %w", i, src, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func evaluateOne(src string, env map[string]report.Tree, vars map[string]any) (Result, error) {
	tree, err := parser.Parse(src)
	if err != nil {
		return Result{}, fmt.Errorf("syntax: %v", err)
	}
	refs := &figureRefs{}
	ast.Walk(&tree.Node, refs)
	for _, path := range refs.paths {
		if err := checkFigure(env, path); err != nil {
			return Result{}, err
		}
	}
	prog, err := expr.Compile(src, expr.Env(vars))
	if err != nil {
		return Result{}, fmt.Errorf("%v", err)
	}
	v, err := expr.Run(prog, vars)
	if err != nil {
		return Result{}, fmt.Errorf("%v", err)
	}
	held, ok := v.(bool)
	if !ok {
		return Result{}, fmt.Errorf("not a boolean expression (it gives %v): an expectation must compare, such as %s > 0", v, src)
	}
	return Result{Expr: src, Held: held, Detail: explain(tree.Node, refs.paths, vars)}, nil
}

// figureRefs collects the dotted paths an expression names: chains of
// member accesses with constant names, rooted at an identifier.
type figureRefs struct {
	paths [][]string
	seen  map[string]bool
}

func (f *figureRefs) Visit(n *ast.Node) {
	path, ok := memberPath(*n)
	if !ok {
		return
	}
	key := strings.Join(path, ".")
	if f.seen == nil {
		f.seen = map[string]bool{}
	}
	// Inner chains are prefixes of outer ones; keep only the longest by
	// dropping a path that a kept one extends, and skipping prefixes.
	for k := range f.seen {
		if strings.HasPrefix(k, key+".") {
			return
		}
	}
	kept := f.paths[:0]
	for _, p := range f.paths {
		if !strings.HasPrefix(key, strings.Join(p, ".")+".") {
			kept = append(kept, p)
		} else {
			delete(f.seen, strings.Join(p, "."))
		}
	}
	f.paths = append(kept, path)
	f.seen[key] = true
}

func memberPath(n ast.Node) ([]string, bool) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return []string{n.Value}, true
	case *ast.MemberNode:
		s, ok := n.Property.(*ast.StringNode)
		if !ok {
			return nil, false
		}
		p, ok := memberPath(n.Node)
		if !ok {
			return nil, false
		}
		return append(p, s.Value), true
	}
	return nil, false
}

func checkFigure(env map[string]report.Tree, path []string) error {
	root, ok := env[path[0]]
	if !ok {
		if isBuiltin(path[0]) && len(path) == 1 {
			return nil
		}
		return fmt.Errorf("figure %s does not exist: %q is not a variant (variants: %s)",
			strings.Join(path, "."), path[0], strings.Join(sortedKeys(env), ", "))
	}
	var node any = root
	for i, seg := range path[1:] {
		t, ok := node.(report.Tree)
		if !ok {
			return fmt.Errorf("figure %s does not exist: %s is a number", strings.Join(path, "."), strings.Join(path[:i+1], "."))
		}
		next, ok := t[seg]
		if !ok {
			return fmt.Errorf("figure %s does not exist; %s has: %s", strings.Join(path, "."),
				strings.Join(path[:i+1], "."), strings.Join(sortedKeys(t), ", "))
		}
		node = next
	}
	return nil
}

// explain shows the two sides of a top-level comparison and the value of
// every figure named.
func explain(root ast.Node, paths [][]string, vars map[string]any) string {
	var parts []string
	if b, ok := root.(*ast.BinaryNode); ok && isComparison(b.Operator) {
		l, lerr := evalNode(b.Left, vars)
		r, rerr := evalNode(b.Right, vars)
		if lerr == nil && rerr == nil {
			parts = append(parts, fmt.Sprintf("left %s = %s, right %s = %s", b.Left.String(), l, b.Right.String(), r))
		}
	}
	for _, p := range paths {
		if v, ok := lookup(vars, p); ok {
			if f, ok := v.(float64); ok {
				parts = append(parts, fmt.Sprintf("%s = %s", strings.Join(p, "."), formatNumber(f)))
			}
		}
	}
	return strings.Join(parts, "; ")
}

func evalNode(n ast.Node, vars map[string]any) (string, error) {
	prog, err := expr.Compile(n.String(), expr.Env(vars))
	if err != nil {
		return "", err
	}
	v, err := expr.Run(prog, vars)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case float64:
		return formatNumber(v), nil
	case int:
		return strconv.Itoa(v), nil
	}
	return fmt.Sprint(v), nil
}

func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', 8, 64) }

func isComparison(op string) bool {
	switch op {
	case "<", "<=", ">", ">=", "==", "!=":
		return true
	}
	return false
}

func isBuiltin(name string) bool {
	switch name {
	case "true", "false", "nil", "abs", "min", "max", "ceil", "floor", "round", "len", "all", "any", "none", "sum", "mean", "median":
		return true
	}
	return false
}

func lookup(vars map[string]any, path []string) (any, bool) {
	var n any = vars
	for _, s := range path {
		m, ok := n.(map[string]any)
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

func treeToMap(t report.Tree) map[string]any {
	m := make(map[string]any, len(t))
	for k, v := range t {
		if sub, ok := v.(report.Tree); ok {
			m[k] = treeToMap(sub)
		} else {
			m[k] = v
		}
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Value evaluates a numeric expression over the figures, such as
// "lstack.redis_benchmark.SET.rps / kernel.redis_benchmark.SET.rps", with
// the same check that every figure it names exists.
func Value(src string, env map[string]report.Tree) (float64, error) {
	tree, err := parser.Parse(src)
	if err != nil {
		return 0, fmt.Errorf("%q: syntax: %v", src, err)
	}
	refs := &figureRefs{}
	ast.Walk(&tree.Node, refs)
	for _, path := range refs.paths {
		if err := checkFigure(env, path); err != nil {
			return 0, fmt.Errorf("%q: %w", src, err)
		}
	}
	vars := make(map[string]any, len(env))
	for k, v := range env {
		vars[k] = treeToMap(v)
	}
	prog, err := expr.Compile(src, expr.Env(vars))
	if err != nil {
		return 0, fmt.Errorf("%q: %v", src, err)
	}
	v, err := expr.Run(prog, vars)
	if err != nil {
		return 0, fmt.Errorf("%q: %v", src, err)
	}
	switch v := v.(type) {
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	}
	return 0, fmt.Errorf("%q: not a number (it gives %v)", src, v)
}
