package rig

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim"
)

// cpuFigures reports each core of h over the measured window and where
// its time went, and the host's roll-up:
//
//	cpu.ID.{user,kernel,busy}_pct, turns, busy_ns
//	cpu.ID.ops.OP.{count,ns}        every operation charged
//	cpu.ID.layers.LAYER.ns          every layer that charged (a;b nests as a.b)
//	cpu.all.*                       the same over the host's cores
//
// Nanoseconds keep the picoseconds the cost model prices in (three
// decimals), so a core's ops.*.ns and layers.*.ns add up exactly to its
// busy_ns.
func cpuFigures(ht report.Tree, h *host, window time.Duration) {
	cores := h.sortedCores()
	if len(cores) == 0 {
		return
	}
	var all sim.CoreStats
	for _, c := range cores {
		s := c.Stats()
		ct := ht.Sub(fmt.Sprintf("cpu.%d", c.ID))
		ct.Set("user_pct", pct(s.UserPS, window, 1))
		ct.Set("kernel_pct", pct(s.KernelPS, window, 1))
		ct.Set("busy_pct", pct(s.BusyPS(), window, 1))
		ct.Set("turns", float64(s.Turns))
		ct.Set("busy_ns", psToNS(s.BusyPS()))
		opFigures(ct, s.Layers)
		all.UserPS += s.UserPS
		all.KernelPS += s.KernelPS
		all.Layers = mergeLayers(all.Layers, s.Layers)
	}
	at := ht.Sub("cpu.all")
	n := len(cores)
	at.Set("user_pct", pct(all.UserPS, window, n))
	at.Set("kernel_pct", pct(all.KernelPS, window, n))
	at.Set("busy_pct", pct(all.BusyPS(), window, n))
	at.Set("busy_ns", psToNS(all.BusyPS()))
	// The run queue's average (what the load average counts): one thread
	// per core and none waiting for a CPU, so it is the busy cores on
	// average.
	at.Set("run_queue", report.Round(float64(all.BusyPS())/1000/float64(window), 3))
	opFigures(at, all.Layers)
}

// opFigures sets ops.OP.{count,ns} and layers.LAYER.ns from layers.
func opFigures(t report.Tree, layers []sim.LayerStats) {
	var ops [hw.NumCostOps]sim.OpStat
	for _, l := range layers {
		var ps int64
		for op, s := range l.Ops {
			ops[op].Count += s.Count
			ops[op].PS += s.PS
			ps += s.PS
		}
		if ps > 0 {
			t.Set("layers."+strings.ReplaceAll(l.Layer, ";", ".")+".ns", psToNS(ps))
		}
	}
	for op, s := range ops {
		if s.Count == 0 {
			continue
		}
		name := hw.CostOp(op).Name()
		t.Set("ops."+name+".count", float64(s.Count))
		t.Set("ops."+name+".ns", psToNS(s.PS))
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
	p := report.Profile{Variant: variant, Host: h.name}
	for _, l := range all {
		for op, s := range l.Ops {
			if s.PS > 0 {
				p.Stacks = append(p.Stacks, report.Stack{Frames: h.name + ";" + l.Layer + ";" + hw.CostOp(op).Name(), NS: psToNS(s.PS)})
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
