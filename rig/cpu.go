package rig

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim"
)

// cpuFigures reports each core of h over the measured window and where
// its time went, and the host's roll-up:
//
//	cpu.ID.{user,kernel,busy}_pct, turns, busy_ns
//	cpu.ID.smt.{shared,extra}_ns    on SMT machines: work run beside a busy sibling, and what sharing added
//	cpu.ID.ops.OP.{count,ns}        every operation (zeros included)
//	cpu.ID.layers.LAYER.ns          every layer work runs as (a;b nests as a.b)
//	cpu.all.*                       the same over the host's cores
//	cpu.ID.during.APP.busy_pct      busy while a load generator was active
//
// Nanoseconds keep the picoseconds the cost model prices in (three
// decimals), so a core's ops.*.ns and layers.*.ns add up exactly to its
// busy_ns.
func cpuFigures(ht report.Tree, h *host, window time.Duration) {
	cores := h.sortedCores()
	if len(cores) == 0 {
		return
	}
	ops := costops.Table()
	// On a machine whose hardware threads share a core (numa.Topology
	// SMTYield), each CPU says how much of its work ran while its sibling
	// was busy (smt.shared_ns) and what the sharing added (smt.extra_ns).
	smt := h.topo.SMTYield > 0
	var all sim.CoreStats
	for _, c := range cores {
		s := c.Stats()
		ct := ht.Sub(fmt.Sprintf("cpu.%d", c.ID))
		ct.Set("user_pct", pct(s.UserPS, window, 1))
		ct.Set("kernel_pct", pct(s.KernelPS, window, 1))
		ct.Set("busy_pct", pct(s.BusyPS(), window, 1))
		ct.Set("turns", float64(s.Turns))
		ct.Set("busy_ns", psToNS(s.BusyPS()))
		if smt {
			ct.Set("smt.shared_ns", psToNS(s.SiblingPS))
			ct.Set("smt.extra_ns", psToNS(s.SiblingExtraPS))
		}
		opFigures(ct, ops, s.Layers)
		all.UserPS += s.UserPS
		all.KernelPS += s.KernelPS
		all.SiblingPS += s.SiblingPS
		all.SiblingExtraPS += s.SiblingExtraPS
		all.Layers = mergeLayers(all.Layers, s.Layers)
	}
	at := ht.Sub("cpu.all")
	n := len(cores)
	at.Set("user_pct", pct(all.UserPS, window, n))
	at.Set("kernel_pct", pct(all.KernelPS, window, n))
	at.Set("busy_pct", pct(all.BusyPS(), window, n))
	at.Set("busy_ns", psToNS(all.BusyPS()))
	if smt {
		at.Set("smt.shared_ns", psToNS(all.SiblingPS))
		at.Set("smt.extra_ns", psToNS(all.SiblingExtraPS))
	}
	// The load average is not busy cores (softirq is busy and no thread's;
	// a thread waiting for a CPU is not busy): loadFigures counts threads.
	opFigures(at, ops, all.Layers)
}

// opFigures sets ops.OP.{count,ns} and layers.LAYER.ns from layers,
// naming each op by the run's table.
func opFigures(t report.Tree, table *hw.CostTable, layers []sim.LayerStats) {
	var ops [hw.NumCostOps]sim.OpStat
	for _, l := range layers {
		var ps int64
		for op, s := range l.Ops {
			ops[op].Count += s.Count
			ops[op].PS += s.PS
			ps += s.PS
		}
		t.Set("layers."+strings.ReplaceAll(l.Layer, ";", ".")+".ns", psToNS(ps))
	}
	// Every operation is listed, zeros too, so that an expectation over
	// one (ops.softirq_packet.count == 0) always names a figure.
	for _, o := range table.Ops() {
		s := ops[o.Op]
		t.Set("ops."+o.Key+".count", float64(s.Count))
		t.Set("ops."+o.Key+".ns", psToNS(s.PS))
	}
}

// mergeLayers adds b's layers into a, by name.
func mergeLayers(a, b []sim.LayerStats) []sim.LayerStats {
	for _, l := range b {
		i := sort.Search(len(a), func(i int) bool { return a[i].Layer >= l.Layer })
		if i == len(a) || a[i].Layer != l.Layer {
			a = append(a, sim.LayerStats{})
			copy(a[i+1:], a[i:])
			a[i] = sim.LayerStats{Layer: l.Layer}
		}
		for op, s := range l.Ops {
			a[i].Ops[op].Count += s.Count
			a[i].Ops[op].PS += s.PS
		}
	}
	return a
}

// profile is the host's simulated CPU profile: one folded stack
// (HOST;layer...;op) per layer and operation, weighted by nanoseconds.
func (h *host) profile(variant string) report.Profile {
	var all []sim.LayerStats
	for _, c := range h.sortedCores() {
		all = mergeLayers(all, c.Stats().Layers)
	}
	ops := costops.Table().Ops()
	p := report.Profile{Variant: variant, Host: h.name}
	for _, l := range all {
		for _, o := range ops {
			if s := l.Ops[o.Op]; s.PS > 0 {
				p.Stacks = append(p.Stacks, report.Stack{Frames: h.name + ";" + l.Layer + ";" + o.Key, NS: psToNS(s.PS)})
			}
		}
	}
	sort.Slice(p.Stacks, func(i, j int) bool { return p.Stacks[i].Frames < p.Stacks[j].Frames })
	return p
}

// psToNS turns picoseconds into nanoseconds with their three decimals.
func psToNS(ps int64) float64 { return float64(ps) / 1000 }

// pct is ps of work as a percentage of n cores over window.
func pct(ps int64, window time.Duration, n int) float64 {
	if window <= 0 || n == 0 {
		return 0
	}
	return report.Round(100*float64(ps)/1000/float64(window)/float64(n), 3)
}

// profiles is every host's CPU profile, hosts in the file's order; hosts
// whose cores did nothing are left out.
func (w *world) profiles() []report.Profile {
	var out []report.Profile
	for _, name := range w.hostOrder {
		if p := w.hosts[name].profile(w.v.Name); len(p.Stacks) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// activeApp is a runner with an active phase: a load generator that
// starts sending at some time and may finish before the run ends.
type activeApp interface {
	// Active is when it sent its first request of the measured window
	// and when it finished (the run's end if it did not); ok is false
	// when it sent nothing in the window.
	Active() (start, end time.Duration, ok bool)
}

// activeFigures gives, for each load generator, its active phase
// (APP.active.{start_ms,end_ms,seconds}) and every core's busy share
// during it (HOST.cpu.ID.during.APP.busy_pct and the host's
// cpu.all.during.APP.busy_pct): a server that was saturated while a
// benchmark ran that finished early shows 100% there and less over the
// window. The shares come from the sampler's readings, interpolated
// within a sampling step. Before a run (and for a generator that never
// sent) the figures are 0, so that expectations can name them.
func (w *world) activeFigures(t report.Tree) {
	// The load average is reported here too, beside the other figures
	// that need the world's apps and not only a host.
	w.loadFigures(t, w.window())
	since := w.v.File.Warmup
	for _, a := range w.apps {
		aa, ok := a.run.(activeApp)
		if !ok {
			continue
		}
		start, end, ok := aa.Active()
		start, end = max(start, since), min(end, w.eng.Now())
		active := ok && w.sampler != nil && end > start
		span := end - start
		at := t.Sub(a.name + ".active")
		at.Set("start_ms", 0)
		at.Set("end_ms", 0)
		at.Set("seconds", 0)
		if active {
			at.Set("start_ms", report.Round(float64(start-since)/1e6, 6))
			at.Set("end_ms", report.Round(float64(end-since)/1e6, 6))
			at.Set("seconds", report.Round(span.Seconds(), 9))
		}
		i := 0
		for _, hn := range w.hostOrder {
			h := w.hosts[hn]
			cores := h.sortedCores()
			var sum float64
			for _, c := range cores {
				var p float64
				if active {
					p = 100 * w.sampler.busyBetween(i, start, end) / 1000 / float64(span)
				}
				t.Sub(fmt.Sprintf("%s.cpu.%d.during.%s", hn, c.ID, a.name)).Set("busy_pct", report.Round(p, 3))
				sum += p
				i++
			}
			if len(cores) > 0 {
				t.Sub(hn+".cpu.all.during."+a.name).Set("busy_pct", report.Round(sum/float64(len(cores)), 3))
			}
		}
	}
}
