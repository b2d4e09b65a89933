package report

import (
	"regexp"
	"sort"
	"strings"
)

// Reproduction is one published figure a scenario reproduces beside
// Savanna's value for it (the scenario's reproduction rows, which
// docs/reproduction.md gathers). It goes into the printed reports'
// summaries, not into report.json.
type Reproduction struct {
	Figure string
	// Kind is the row's kind: predicted, declared or derived.
	Kind string
	// Published is the article's value; PublishedText is the figure as
	// the scenario writes it (the article's own digits), printed in its
	// place when set.
	Published     float64
	PublishedText string
	// Savanna is Savanna's value; Err says why there is none (a figure
	// of an unfinished run, say).
	Savanna float64
	Err     string
	Note    string
}

// row is one figure path and its value in each variant.
type row struct {
	path    string
	values  []float64
	present []bool
}

// cells are the row's values as printed, "-" where a variant lacks the
// figure.
func (w row) cells() []string {
	out := make([]string, len(w.values))
	for i, v := range w.values {
		out[i] = "-"
		if w.present[i] {
			out[i] = FormatFigure(w.path, v)
		}
	}
	return out
}

func (w row) allZero() bool {
	for i, v := range w.values {
		if w.present[i] && v != 0 {
			return false
		}
	}
	return true
}

// figureRows is every figure path of any variant, sorted, with one value
// per variant.
func (r *Report) figureRows() []row {
	byPath := map[string]*row{}
	var paths []string
	for vi, v := range r.Variants {
		for _, f := range r.Figures[v].Flatten() {
			w, ok := byPath[f.Path]
			if !ok {
				w = &row{path: f.Path, values: make([]float64, len(r.Variants)), present: make([]bool, len(r.Variants))}
				byPath[f.Path] = w
				paths = append(paths, f.Path)
			}
			w.values[vi], w.present[vi] = f.Value, true
		}
	}
	sort.Strings(paths)
	out := make([]row, len(paths))
	for i, p := range paths {
		out[i] = *byPath[p]
	}
	return out
}

// rows is figureRows' paths and printed cells.
func (r *Report) rows() (paths []string, cells map[string][]string) {
	cells = map[string][]string{}
	for _, w := range r.figureRows() {
		paths = append(paths, w.path)
		cells[w.path] = w.cells()
	}
	return paths, cells
}

// printedRows is the rows the report's filter selects (all without one).
func (r *Report) printedRows() []row {
	all := r.figureRows()
	if r.filter == nil {
		return all
	}
	var out []row
	for _, w := range all {
		if r.filter.Match(w.path, r.Variants) {
			out = append(out, w)
		}
	}
	return out
}

// A summary's headline figures are, in this order: the figures the
// expectations name, in the order they first appear; then each app's
// throughput and latency figures (a name within two levels of the app,
// such as wrk.rps, pktgen.rtt.p99_us or redis_benchmark.GET.p50_ms, that
// is a rate (rps, qps, tps, *_pps) or a latency statistic (p50_*,
// p90_*, p99_*, p999_*, avg_*, mean_*)), sorted. A scenario file cannot
// name its headline figures itself: expectations and reproduction rows
// already say what it is about.
var (
	// figureRef is a dotted figure path in an expectation, with names
	// in brackets (stack["0"]) as expr writes names that are numbers.
	figureRef = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+|\["[^"]*"\])+`)
	bracket   = regexp.MustCompile(`\["([^"]*)"\]`)
	headline  = regexp.MustCompile(`^(rps|qps|tps|[a-z_]*pps|(p50|p90|p99|p999|avg|mean)_(ns|us|ms|s))$`)
)

// headlineRows are the summary's figures (see above), as rows over the
// variants.
func (r *Report) headlineRows() []row {
	all := r.figureRows()
	index := map[string]int{}
	for i, w := range all {
		index[w.path] = i
	}
	variants := map[string]bool{}
	for _, v := range r.Variants {
		variants[v] = true
	}
	seen := map[string]bool{}
	var out []row
	add := func(p string) {
		if i, ok := index[p]; ok && !seen[p] {
			seen[p] = true
			out = append(out, all[i])
		}
	}
	for _, e := range r.Expectations {
		for _, ref := range figureRef.FindAllString(e.Expr, -1) {
			ref = bracket.ReplaceAllString(ref, ".$1")
			v, p, ok := strings.Cut(ref, ".")
			if ok && variants[v] {
				add(p)
			}
		}
	}
	for _, w := range all {
		names := strings.Split(w.path, ".")
		if len(names) < 2 || len(names) > 3 || (len(names) > 1 && names[1] == "cpu") {
			continue
		}
		if headline.MatchString(names[len(names)-1]) {
			add(w.path)
		}
	}
	return out
}

// verdict is an expectation's PASS or FAIL.
func (e Expectation) verdict() string {
	if e.Held {
		return "PASS"
	}
	return "FAIL"
}

// held counts the expectations that held.
func (r *Report) held() int {
	n := 0
	for _, e := range r.Expectations {
		if e.Held {
			n++
		}
	}
	return n
}

// ratio is Savanna's value over the published one, as printed.
func (x Reproduction) ratio() string {
	if x.Err != "" || x.Published == 0 {
		return "-"
	}
	return FormatNumber(x.Savanna / x.Published)
}

// published is the article's figure as printed: its own text when the
// scenario kept it, so that 14.255 is never shown as 14.26.
func (x Reproduction) published() string {
	if x.PublishedText != "" {
		return x.PublishedText
	}
	return FormatNumber(x.Published)
}

// savanna is Savanna's value as printed.
func (x Reproduction) savanna() string {
	if x.Err != "" {
		return "-"
	}
	return FormatNumber(x.Savanna)
}
