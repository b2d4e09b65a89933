// Package report aggregates repeated runs into medians with their
// minimum and maximum and renders the comparison as Markdown and JSON.
package report

import (
	"fmt"
	"sort"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/bench/work"
)

// Env describes where and with what the runs were made.
type Env struct {
	Date       string            `json:"date"`
	GoVersion  string            `json:"go_version"`
	Modules    map[string]string `json:"modules"`
	CPUModel   string            `json:"cpu_model"`
	Cores      int               `json:"cores"`
	Kernel     string            `json:"kernel"`
	GOMAXPROCS int               `json:"gomaxprocs"`
	LoadBefore string            `json:"load_before"`
	LoadAfter  string            `json:"load_after"`
	Quick      bool              `json:"quick"`
	Reps       int               `json:"reps"`
	Params     work.Params       `json:"params"`
	// Families and ManyFamilies are the -families and -many-families
	// flags: the address families the workloads ran at.
	Families     string                     `json:"families,omitempty"`
	ManyFamilies string                     `json:"many_families,omitempty"`
	Savanna      map[int]netw.SavannaSizing `json:"savanna_sizing"`
	Notes        []string                   `json:"notes,omitempty"`
}

// Stat is a metric's median over repetitions, with its extremes.
type Stat struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"`
	Higher bool    `json:"higher_is_better"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Cell is one (workload, network, MTU, address family): its repetitions
// and their aggregate.
type Cell struct {
	Workload string `json:"workload"`
	Network  string `json:"network"`
	MTU      int    `json:"mtu"`
	// Family is 4 or 6 (0, in a report older than the family
	// dimension, is 4).
	Family   int           `json:"family"`
	Runs     []work.Result `json:"runs"`
	Failures []string      `json:"failures,omitempty"`
	Stats    []Stat        `json:"stats"`
	// Drops sums the repetitions' drops.
	Drops netw.Drops `json:"drops"`
}

// Stat returns the named statistic.
func (c *Cell) Stat(name string) (Stat, bool) {
	for _, s := range c.Stats {
		if s.Name == name {
			return s, true
		}
	}
	return Stat{}, false
}

// Median returns the middle of vs (the mean of the two middle values
// for an even count).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Aggregate computes Stats and Drops from Runs.
func (c *Cell) Aggregate() {
	c.Stats = nil
	c.Drops = netw.Drops{}
	if len(c.Runs) == 0 {
		return
	}
	for i, m := range c.Runs[0].Metrics {
		vs := make([]float64, 0, len(c.Runs))
		for _, r := range c.Runs {
			if i < len(r.Metrics) && r.Metrics[i].Name == m.Name {
				vs = append(vs, r.Metrics[i].Value)
			}
		}
		s := Stat{Name: m.Name, Unit: m.Unit, Higher: m.Higher, Median: Median(vs), Min: vs[0], Max: vs[0]}
		for _, v := range vs {
			s.Min, s.Max = min(s.Min, v), max(s.Max, v)
		}
		c.Stats = append(c.Stats, s)
	}
	var detail, counters [][]netw.Counter
	for _, r := range c.Runs {
		c.Drops.Link += r.Drops.Link
		c.Drops.Stack += r.Drops.Stack
		c.Drops.Retransmits += r.Drops.Retransmits
		detail = append(detail, r.Drops.Detail)
		counters = append(counters, r.Drops.Counters)
	}
	c.Drops.Detail, c.Drops.Counters = sumCounters(detail), sumCounters(counters)
}

// sumCounters adds named counters up, sorted by name.
func sumCounters(runs [][]netw.Counter) []netw.Counter {
	sum := map[string]uint64{}
	for _, cs := range runs {
		for _, c := range cs {
			sum[c.Name] += c.Value
		}
	}
	names := make([]string, 0, len(sum))
	for k := range sum {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []netw.Counter
	for _, k := range names {
		out = append(out, netw.Counter{Name: k, Value: sum[k]})
	}
	return out
}

// Report is the whole comparison.
type Report struct {
	Env   Env     `json:"env"`
	Cells []*Cell `json:"cells"`
	Goals []Goal  `json:"goals"`
}

// Find returns the IPv4 cell for (workload, network, mtu) or nil; mtu 0
// matches any.
func (r *Report) Find(workload, network string, mtu int) *Cell {
	return r.FindFamily(workload, network, mtu, 4)
}

// FindFamily returns the cell for (workload, network, mtu, family) or
// nil; mtu 0 matches any.
func (r *Report) FindFamily(workload, network string, mtu, family int) *Cell {
	for _, c := range r.Cells {
		if c.Workload == workload && c.Network == network && (mtu == 0 || c.MTU == mtu) && c.family() == family {
			return c
		}
	}
	return nil
}

// family is Family, 4 when unset.
func (c *Cell) family() int {
	if c.Family == 0 {
		return 4
	}
	return c.Family
}

// Goal is one of the goals, checked against the medians.
type Goal struct {
	Text   string  `json:"text"`
	Ratio  float64 `json:"ratio"`
	Target string  `json:"target"`
	Met    bool    `json:"met"`
	// Known is false when a cell it needs is missing or failed.
	Known bool `json:"known"`
	// Note says, for a goal not met, what the figures were, whether the
	// repetitions overlap (the gap may then be noise) and where the
	// profiles are.
	Note string `json:"note,omitempty"`
}

// CheckGoals evaluates the goals at every MTU both savanna and
// gvisor ran.
func (r *Report) CheckGoals() {
	r.Goals = nil
	ratio := func(w, metric, a string, am int, b string, bm int) (float64, bool) {
		ca, cb := r.Find(w, a, am), r.Find(w, b, bm)
		if ca == nil || cb == nil {
			return 0, false
		}
		sa, ok1 := ca.Stat(metric)
		sb, ok2 := cb.Stat(metric)
		if !ok1 || !ok2 || sb.Median == 0 || len(ca.Failures) > 0 || len(cb.Failures) > 0 {
			return 0, false
		}
		return sa.Median / sb.Median, true
	}
	add := func(text, w, metric string, am int, b string, bm int, target float64, atLeast bool) {
		v, ok := ratio(w, metric, "savanna", am, b, bm)
		g := Goal{Text: text, Ratio: v, Known: ok}
		if atLeast {
			g.Target = fmt.Sprintf("≥ %g", target)
			g.Met = ok && v >= target
		} else {
			g.Target = fmt.Sprintf("≤ %g", target)
			g.Met = ok && v <= target
		}
		r.Goals = append(r.Goals, g)
	}
	var mtus []int
	for _, c := range r.Cells {
		if c.Workload == "bulk" && c.Network == "savanna" && c.family() == 4 && r.Find("bulk", "gvisor", c.MTU) != nil {
			mtus = append(mtus, c.MTU)
		}
	}
	sort.Ints(mtus)
	for _, m := range mtus {
		add(fmt.Sprintf("bulk MB per CPU-second, savanna/gvisor at MTU %d", m), "bulk", "mb_per_cpu_s", m, "gvisor", m, 2, true)
	}
	pm := r.commonMTU("pingpong")
	add("ping-pong rate, savanna/gvisor", "pingpong", "rate", pm, "gvisor", pm, 2, true)
	sm := r.commonMTU("setup")
	add("connection setup rate, savanna/gvisor", "setup", "rate", sm, "gvisor", sm, 2, true)
	mm := r.commonMTU("many")
	add(fmt.Sprintf("%d connections peak RSS, savanna/gvisor", r.Env.Params.ManyConns), "many", "peak_rss", mm, "gvisor", mm, 0.1, false)
	add("ping-pong rate, savanna/kernel", "pingpong", "rate", pm, "kernel", 0, 1, true)
	r.checkFamilyGoals(pm, sm)
	r.checkRTCGoals()
}

// familyTarget is issue 21's bound: IPv6 within 5% of IPv4 per
// CPU-second.
const familyTarget = 0.95

// checkFamilyGoals adds issue 21's goals: savanna's IPv6 work per
// CPU-second over its IPv4 work per CPU-second, for bulk at every MTU
// savanna ran at IPv6, ping-pong and setup. Ping-pong's and setup's
// figures are CPU per operation, so their ratio is IPv4's over IPv6's.
func (r *Report) checkFamilyGoals(pm, sm int) {
	add := func(text, w, metric string, mtu int, inverse bool) {
		c4, c6 := r.FindFamily(w, "savanna", mtu, 4), r.FindFamily(w, "savanna", mtu, 6)
		if c6 == nil {
			return // IPv6 not run: no goal to report
		}
		g := Goal{Text: text, Target: fmt.Sprintf("≥ %g", familyTarget)}
		var s4, s6 Stat
		ok4, ok6 := false, false
		if c4 != nil {
			s4, ok4 = c4.Stat(metric)
		}
		s6, ok6 = c6.Stat(metric)
		if ok4 && ok6 && s4.Median > 0 && s6.Median > 0 && len(c4.Failures) == 0 && len(c6.Failures) == 0 {
			g.Known = true
			g.Ratio = s6.Median / s4.Median
			if inverse {
				g.Ratio = s4.Median / s6.Median
			}
			g.Met = g.Ratio >= familyTarget
			if !g.Met {
				g.Note = fmt.Sprintf("IPv4 %s (%s–%s), IPv6 %s (%s–%s) %s", fmtNum(s4.Median), fmtNum(s4.Min), fmtNum(s4.Max),
					fmtNum(s6.Median), fmtNum(s6.Min), fmtNum(s6.Max), s4.Unit)
				if s6.Min <= s4.Max && s4.Min <= s6.Max && len(c4.Runs) > 1 && len(c6.Runs) > 1 {
					g.Note += "; the repetitions overlap, so this run alone does not tell the gap from run-to-run noise"
				}
				g.Note += "; PROFILE.md's section \"IPv6 against IPv4\" says where IPv6's extra CPU goes"
			}
		}
		r.Goals = append(r.Goals, g)
	}
	var bulkMTUs []int
	for _, c := range r.Cells {
		if c.Workload == "bulk" && c.Network == "savanna" && c.family() == 6 {
			bulkMTUs = append(bulkMTUs, c.MTU)
		}
	}
	sort.Ints(bulkMTUs)
	for _, m := range bulkMTUs {
		add(fmt.Sprintf("savanna IPv6 / IPv4 bulk MB per CPU-second at MTU %d", m), "bulk", "mb_per_cpu_s", m, false)
	}
	add("savanna IPv6 / IPv4 ping-pong round trips per CPU-second", "pingpong", "cpu_per_100k", pm, true)
	add("savanna IPv6 / IPv4 connection setups per CPU-second", "setup", "cpu_per_conn", sm, true)
}

// commonMTU is the smallest MTU at which savanna ran workload w.
func (r *Report) commonMTU(w string) int {
	best := 0
	for _, c := range r.Cells {
		if c.Workload == w && c.Network == "savanna" && c.family() == 4 && (best == 0 || c.MTU < best) {
			best = c.MTU
		}
	}
	return best
}
