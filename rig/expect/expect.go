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
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/savanna-sim/savanna/rig/report"
)

// Result is the outcome of one expectation.
type Result struct {
	Expr string `json:"expr"`
	Held bool   `json:"held"`
	// Detail gives the values behind the verdict.
	Detail string `json:"detail"`
	// Err is why the expectation could not be evaluated (a syntax error,
	// an unknown figure, a non-boolean result); Held is then false.
	Err error `json:"-"`
}

// Evaluate checks every expectation against env (variant name to its
// figures) and returns a result for each, in order. One that cannot be
// evaluated (a syntax error, an unknown figure, a non-boolean result)
// has its Err set and is also in the returned error, which names it as
// expect[i]; the others are still evaluated.
//
// An expectation that names a figure of a phase that never finished
// fails: when a figure's path has a prefix P (variant included) whose
// P.finished figure is 0, the figure counts only what completed before
// the run ended, and a comparison over it would hold or fail by
// accident. Figures named finished are exempt.
func Evaluate(exprs []string, env map[string]report.Tree) ([]Result, error) {
	c := NewChecker(env)
	out := make([]Result, 0, len(exprs))
	var errs []error
	for i, src := range exprs {
		r, err := c.evaluate(src)
		if err != nil {
			r = Result{Expr: src, Detail: "cannot be evaluated: " + err.Error(), Err: err}
			errs = append(errs, fmt.Errorf("expect[%d] %q: %w", i, src, err))
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// Check checks an expectation without evaluating it for its verdict:
// its syntax, that every figure it names exists in env (with a
// suggestion when a figure of a close name does), and that it gives a
// boolean. env is typically the figure tree of variants built but not
// run, so its values mean nothing; only their names count.
func Check(src string, env map[string]report.Tree) error { return NewChecker(env).Check(src) }

// CheckValue is Check for a numeric expression (a reproduction's
// savanna expression).
func CheckValue(src string, env map[string]report.Tree) error {
	return NewChecker(env).CheckValue(src)
}

// Checker checks many expressions against one figure tree.
type Checker struct {
	env  map[string]report.Tree
	vars map[string]any
}

// NewChecker returns a checker over env (see Check).
func NewChecker(env map[string]report.Tree) *Checker {
	vars := make(map[string]any, len(env))
	for k, v := range env {
		vars[k] = treeToMap(v)
	}
	return &Checker{env: env, vars: vars}
}

// Check is the package's Check.
func (c *Checker) Check(src string) error { return c.check(src, true) }

// CheckValue is the package's CheckValue.
func (c *Checker) CheckValue(src string) error { return c.check(src, false) }

// prepare parses src, checks that every figure it names exists and
// compiles it: what checking and evaluating an expression share.
func (c *Checker) prepare(src string) (ast.Node, [][]string, *vm.Program, error) {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil, nil, nil, syntaxError(err)
	}
	refs := &figureRefs{}
	ast.Walk(&tree.Node, refs)
	for _, path := range refs.paths {
		if err := checkFigure(c.env, path); err != nil {
			return nil, nil, nil, err
		}
	}
	prog, err := expr.Compile(src, expr.Env(c.vars))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%v", err)
	}
	return tree.Node, refs.paths, prog, nil
}

func (c *Checker) check(src string, boolean bool) error {
	_, _, prog, err := c.prepare(src)
	if err != nil {
		return err
	}
	// The values are placeholders: an error running on them (a
	// division by zero, say) says nothing of the real run, but the
	// type of the result does.
	v, err := expr.Run(prog, c.vars)
	if err != nil {
		return nil
	}
	switch v.(type) {
	case bool:
		if !boolean {
			return fmt.Errorf("not a number (it gives %v)", v)
		}
	case float64, int:
		if boolean {
			return fmt.Errorf("not a boolean expression (it gives a number): an expectation must compare, such as %s > 0", src)
		}
	}
	return nil
}

// evaluate gives an expectation's verdict on the checker's figures.
func (c *Checker) evaluate(src string) (Result, error) {
	root, paths, prog, err := c.prepare(src)
	if err != nil {
		return Result{}, err
	}
	v, err := expr.Run(prog, c.vars)
	if err != nil {
		return Result{}, fmt.Errorf("%v", err)
	}
	held, ok := v.(bool)
	if !ok {
		return Result{}, fmt.Errorf("not a boolean expression (it gives %v): an expectation must compare, such as %s > 0", v, src)
	}
	if phases := unfinishedPhases(c.env, paths); len(phases) > 0 {
		var parts []string
		for _, p := range phases {
			parts = append(parts, "phase "+p+" never finished")
		}
		return Result{Expr: src, Held: false, Detail: strings.Join(parts, "; ") + " (its figures count only what completed)"}, nil
	}
	return Result{Expr: src, Held: held, Detail: explain(root, paths, c.vars)}, nil
}

// unfinishedPhases returns, in the order the expression names them and
// without repeats, the phases that never finished among the figures'
// path prefixes: for each figure (but those named finished), its
// deepest prefix P with a figure P.finished equal to 0.
func unfinishedPhases(env map[string]report.Tree, paths [][]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, path := range paths {
		if len(path) < 2 || path[len(path)-1] == "finished" {
			continue
		}
		root, ok := env[path[0]]
		if !ok {
			continue
		}
		for n := len(path) - 1; n >= 1; n-- {
			v, ok := root.Lookup(append(append([]string{}, path[1:n]...), "finished"))
			if f, isNum := v.(float64); ok && isNum && f == 0 {
				p := strings.Join(path[:n], ".")
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
				break
			}
		}
	}
	return out
}

// syntaxError keeps the first line of expr's parse error, which gives
// the position ("unexpected token EOF (1:21)"); the lines after it draw
// the expression with a caret, which an error a line cannot show.
func syntaxError(err error) error {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Errorf("syntax: %s", msg)
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
		return fmt.Errorf("figure %s does not exist: %q is not a variant (variants: %s)%s",
			strings.Join(path, "."), path[0], strings.Join(sortedKeys(env), ", "), suggest(env, path))
	}
	var node any = root
	for i, seg := range path[1:] {
		t, ok := node.(report.Tree)
		if !ok {
			return fmt.Errorf("figure %s does not exist: %s is a number", strings.Join(path, "."), strings.Join(path[:i+1], "."))
		}
		next, ok := t[seg]
		if !ok {
			return fmt.Errorf("figure %s does not exist; %s has: %s%s", strings.Join(path, "."),
				strings.Join(path[:i+1], "."), strings.Join(sortedKeys(t), ", "), suggest(env, path))
		}
		node = next
	}
	return nil
}

// suggest returns "; did you mean X?" for the figure of env whose path
// is closest to path by edit distance, when it is close enough to be a
// slip (at most a quarter of the name's characters, and at least 2,
// changed); ties go to the first in sorted order.
func suggest(env map[string]report.Tree, path []string) string {
	want := strings.Join(path, ".")
	limit := max(2, len(want)/4)
	best, bestD := "", limit+1
	for _, v := range sortedKeys(env) {
		for _, f := range env[v].Flatten() {
			name := v + "." + f.Path
			if d := levenshtein(want, name, bestD); d < bestD {
				best, bestD = name, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// levenshtein is the edit distance between a and b (bytes), or any
// value of at least limit once it is known to reach limit.
func levenshtein(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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

// formatNumber prints a value an expectation compared exactly, as the
// shortest decimal that reads back to it and never with an exponent
// (1.97587e+06 is hard to check against a threshold; the report's
// rounded format would hide why a comparison failed).
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

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
		return 0, fmt.Errorf("%q: %w", src, syntaxError(err))
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
