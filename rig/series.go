package rig

import (
	"fmt"
	"sort"
	"time"

	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim"
)

// samplesPerRun is how many points each series over time gets: enough
// to see a reload's dip or a leak's slope, few enough that sampling
// costs nothing next to the run.
const samplesPerRun = 100

// throughputApp is a runner whose completed work report.html plots over
// time.
type throughputApp interface {
	// Completed returns the work done since the last ResetStats, and
	// what one unit of it is ("requests", "frames").
	Completed(now time.Duration) (n uint64, unit string)
}

// shimApp is a runner that compresses through the zlib shim, whose
// fallbacks to software report.html plots over time.
type shimApp interface {
	// ShimFallbacks returns the hardware failures since the start: each
	// a request redone in software under failover, or an error under
	// hardware-only.
	ShimFallbacks() uint64
}

// probe reads one figure of a running world.
type probe struct {
	plot, yLabel, panel, line string
	// stacked draws the panel's lines as stacked areas (user, kernel).
	stacked bool
	// rate turns a counter into its increase per second over each
	// interval; otherwise the value is plotted as read.
	rate bool
	// scale multiplies the plotted value (100 for a share as percent).
	scale float64
	// ceiling bounds the axis (100 for percentages).
	ceiling float64
	read    func() float64
}

// sampler records probes at even steps of the measured phase. It reads
// the models between engine steps and schedules no events, so a run with
// sampling is the same run as one without.
type sampler struct {
	// refresh takes each model's statistics once per sample, for the
	// probes that read figures out of them.
	refresh []func()
	probes  []probe
	last    []float64
	lastAt  time.Duration
	series  []report.Series
	// cores are every host's cores; busy[i] is core i's charged work
	// (picoseconds since the window began) at each of at, for busy
	// percentages over an app's active phase.
	cores []*sim.Core
	at    []time.Duration
	busy  [][]int64
}

// newSampler lists the probes of a built world: per core, user and
// kernel time; per QAT host, engine busy time, instances and USDM pages
// in use; per app, completed work and shim fallbacks.
func (w *world) newSampler() *sampler {
	s := &sampler{}
	variant := w.v.Name
	for _, name := range w.hostOrder {
		h := w.hosts[name]
		cpuPlot := fmt.Sprintf("CPU per core over time: %s, host %s", variant, name)
		for _, c := range h.sortedCores() {
			panel := fmt.Sprintf("core %d", c.ID)
			var user, kernel int64
			s.refresh = append(s.refresh, func() { user, kernel = c.ChargedPS() })
			s.probes = append(s.probes,
				probe{plot: cpuPlot, yLabel: "% of the core", panel: panel, line: "user", stacked: true, rate: true, scale: 100, ceiling: 100,
					read: func() float64 { return float64(user) / 1e12 }},
				probe{plot: cpuPlot, yLabel: "% of the core", panel: panel, line: "kernel", stacked: true, rate: true, scale: 100, ceiling: 100,
					read: func() float64 { return float64(kernel) / 1e12 }})
			s.cores = append(s.cores, c)
		}
		if h.qat == nil {
			continue
		}
		q := h.qat
		qs := q.Stats()
		s.refresh = append(s.refresh, func() { qs = q.Stats() })
		engines := 0
		for _, d := range qs.Devices {
			engines += len(d.Engines)
		}
		if engines > 0 {
			s.probes = append(s.probes, probe{plot: cpuPlot, yLabel: "% of the engines", panel: "QAT engines", line: "device", stacked: true, rate: true,
				scale: 100 / float64(engines), ceiling: 100, read: func() float64 {
					var busy time.Duration
					for _, d := range qs.Devices {
						for _, e := range d.Engines {
							busy += e.Busy
						}
					}
					return busy.Seconds()
				}})
		}
		hostLine := variant + " " + name
		s.probes = append(s.probes,
			probe{plot: "QAT instances in use over time", yLabel: "instances", line: hostLine, scale: 1,
				read: func() float64 { return float64(qs.InstancesInUse) }},
			probe{plot: "USDM hugepages in use over time", yLabel: "2 MiB pages", line: hostLine, scale: 1,
				read: func() float64 {
					pages := 0
					for _, n := range qs.Nodes {
						pages += n.PagesInUse
					}
					return float64(pages)
				}})
	}
	for _, a := range w.apps {
		line := variant + " " + a.name
		if t, ok := a.run.(throughputApp); ok {
			_, unit := t.Completed(w.eng.Now())
			s.probes = append(s.probes, probe{plot: "Throughput over time (" + unit + ")", yLabel: unit + " per second",
				line: line, rate: true, scale: 1, read: func() float64 { n, _ := t.Completed(w.eng.Now()); return float64(n) }})
		}
		if f, ok := a.run.(shimApp); ok {
			s.probes = append(s.probes, probe{plot: "zlib shim hardware failures over time (fallbacks, or errors if hardware-only)", yLabel: "failures per second",
				line: line, rate: true, scale: 1, read: func() float64 { return float64(f.ShimFallbacks()) }})
		}
	}
	s.series = make([]report.Series, len(s.probes))
	for i, p := range s.probes {
		s.series[i] = report.Series{Plot: p.plot, YLabel: p.yLabel, Panel: p.panel, Line: p.line, Stacked: p.stacked, Ceiling: p.ceiling}
	}
	return s
}

// start takes the first reading, at the start of the measured phase.
func (s *sampler) start(now time.Duration) {
	for _, f := range s.refresh {
		f()
	}
	s.last = make([]float64, len(s.probes))
	for i, p := range s.probes {
		s.last[i] = p.read()
	}
	s.lastAt = now
	s.busy = make([][]int64, len(s.cores))
	s.recordBusy(now)
}

// recordBusy notes every core's charged work at now.
func (s *sampler) recordBusy(now time.Duration) {
	s.at = append(s.at, now)
	for i, c := range s.cores {
		u, k := c.ChargedPS()
		s.busy[i] = append(s.busy[i], u+k)
	}
}

// busyBetween is core i's charged work from a to b, in picoseconds, from
// the samples, interpolated linearly within a step: exact at the steps,
// within a step's share of a turn otherwise.
func (s *sampler) busyBetween(i int, a, b time.Duration) float64 {
	return s.busyAt(i, b) - s.busyAt(i, a)
}

func (s *sampler) busyAt(i int, t time.Duration) float64 {
	at, busy := s.at, s.busy[i]
	switch {
	case len(at) == 0:
		return 0
	case t <= at[0]:
		return float64(busy[0])
	case t >= at[len(at)-1]:
		return float64(busy[len(busy)-1])
	}
	j := sort.Search(len(at), func(j int) bool { return at[j] >= t })
	f := float64(t-at[j-1]) / float64(at[j]-at[j-1])
	return float64(busy[j-1]) + f*float64(busy[j]-busy[j-1])
}

// sample adds one point per probe at now.
func (s *sampler) sample(now time.Duration) {
	dt := (now - s.lastAt).Seconds()
	if dt <= 0 {
		return
	}
	for _, f := range s.refresh {
		f()
	}
	for i, p := range s.probes {
		v := p.read()
		y := v
		if p.rate {
			y = (v - s.last[i]) / dt
		}
		s.last[i] = v
		ser := &s.series[i]
		ser.TimeS = append(ser.TimeS, now.Seconds())
		ser.Values = append(ser.Values, report.Round(y*p.scale, 6))
	}
	s.lastAt = now
	s.recordBusy(now)
}
