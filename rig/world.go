package rig

import (
	"fmt"
	"github.com/savanna-sim/savanna/internal/costops"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
	"github.com/savanna-sim/savanna/stack/ether"
)

// world is one variant of a scenario, built and ready to run.
type world struct {
	s           *scenario.Scenario
	v           *scenario.Variant
	opts        Options
	eng         *sim.Engine
	defaultCost *cost.Model
	hosts       map[string]*host
	hostOrder   []string
	links       []*nic.Link
	apps        []*app
	captures    []*capture
	events      []*event
	sampler     *sampler
	// appLayer is the name of the app being built: the layer its work is
	// charged to on the cores it runs on.
	appLayer string
	// warmupPackets are the frames sent before the statistics were reset.
	warmupPackets uint64
}

// capture is a pcapng file being written for one NIC.
type capture struct {
	path string
	f    *os.File
	c    *nic.Capture
}

// build makes every model of a variant and wires them together.
func build(s *scenario.Scenario, v *scenario.Variant, opts Options, seed uint64) (*world, error) {
	w := &world{s: s, v: v, opts: opts, eng: sim.NewEngine(seed), defaultCost: cost.For(costops.Table()).Default(), hosts: map[string]*host{}}
	var portID uint16
	for _, name := range v.File.HostNames() {
		h, err := w.buildHost(name, v.File.Hosts[name], &portID)
		if err != nil {
			return nil, err
		}
		w.hosts[name] = h
		w.hostOrder = append(w.hostOrder, name)
	}
	for _, name := range w.hostOrder {
		if err := w.setupPorts(w.hosts[name]); err != nil {
			return nil, err
		}
	}
	for i, l := range v.File.Links {
		a, b := w.endpoint(l.Ends[0]), w.endpoint(l.Ends[1])
		link, err := nic.NewLink(w.eng, linkName(l.Ends), a.dev, b.dev, l)
		if err != nil {
			return nil, v.Errorf(fmt.Sprintf("links[%d]", i), "%v", err)
		}
		w.links = append(w.links, link)
	}
	for _, name := range w.hostOrder {
		if err := w.buildStack(w.hosts[name]); err != nil {
			return nil, err
		}
	}
	w.warmNeighbors()
	for _, name := range w.hostOrder {
		if err := w.buildApps(w.hosts[name], v.File.Hosts[name]); err != nil {
			return nil, err
		}
	}
	if err := w.buildEvents(); err != nil {
		return nil, err
	}
	if err := w.startCaptures(); err != nil {
		return nil, err
	}
	return w, nil
}

// warmNeighbors gives the stacks whose scenario says neighbors: warm the
// MAC of the NIC at the other end of each of their links.
func (w *world) warmNeighbors() {
	for _, l := range w.v.File.Links {
		for i := range 2 {
			hn, _, _ := strings.Cut(l.Ends[i], ".")
			st := w.v.File.Hosts[hn].Stack
			h := w.hosts[hn]
			local, peer := w.endpoint(l.Ends[i]), w.endpoint(l.Ends[1-i])
			if st == nil || st.Neighbors != "warm" || h.stack == nil || h.stack.port != local || !peer.ip.IsValid() {
				continue
			}
			for _, in := range h.stack.instances {
				if a := peer.ip.Addr(); a.Is6() {
					in.Iface().AddNeighbor6(w.eng.Now(), a.As16(), ether.Addr(peer.dev.MACAddr()))
				} else {
					in.Iface().AddNeighbor(w.eng.Now(), a.As4(), ether.Addr(peer.dev.MACAddr()))
				}
			}
		}
	}
}

func linkName(ends []string) string { return ends[0] + "-" + ends[1] }

// endpoint finds "host.nic"; validation has checked it exists.
func (w *world) endpoint(ref string) *port {
	hn, nn, _ := strings.Cut(ref, ".")
	return w.hosts[hn].nic(nn)
}

// setupPorts configures each NIC's queues with a mempool per rx queue,
// and starts it. A pool is on the NUMA node of the stack core that serves
// its queue (Gazelle's rule; stack.mbuf_node: nic puts it on the NIC's
// node), else on the NIC's node.
func (w *world) setupPorts(h *host) error {
	st := w.v.File.Hosts[h.name].Stack
	for i, p := range h.nics {
		cfg := w.v.File.Hosts[h.name].NICs[i].PortConfig
		var poolNode func(q int) int
		if st != nil && st.MbufNode != "nic" && p.ip.IsValid() {
			poolNode = func(q int) int {
				if q < len(st.Cores) {
					if n := h.mem.NodeOf(st.Cores[q]); n >= 0 {
						return n
					}
				}
				return p.dev.Info().NUMANode
			}
		}
		pools, err := nic.SetupOnNodes(p.dev, cfg, h.mem, max(cfg.RxQueues, 1), max(cfg.TxQueues, cfg.RxQueues, 1), poolNode)
		if err != nil {
			return w.v.Errorf(fmt.Sprintf("%s.nics[%d]", h.key, i), "%v", err)
		}
		p.pools = pools
	}
	return nil
}

// startCaptures opens a pcapng file per captured NIC when the run writes
// an output folder.
func (w *world) startCaptures() error {
	if w.opts.Out == "" {
		return nil
	}
	for i, ref := range w.v.File.Capture {
		p := w.endpoint(ref)
		path := filepath.Join(w.opts.Out, fmt.Sprintf("%s.%s.pcapng", w.v.Name, ref))
		f, err := os.Create(path)
		if err != nil {
			return w.v.Errorf(fmt.Sprintf("capture[%d]", i), "%v", err)
		}
		c, err := nic.NewCapture(f, 0, p.dev)
		if err != nil {
			f.Close()
			return w.v.Errorf(fmt.Sprintf("capture[%d]", i), "%v", err)
		}
		w.captures = append(w.captures, &capture{path: path, f: f, c: c})
	}
	return nil
}

func (w *world) closeCaptures() error {
	var first error
	for _, c := range w.captures {
		if err := c.c.Flush(); err != nil && first == nil {
			first = fmt.Errorf("capture %s: %w", c.path, err)
		}
		if err := c.f.Close(); err != nil && first == nil {
			first = fmt.Errorf("capture %s: %w", c.path, err)
		}
	}
	return first
}

// run runs the warm-up, resets every statistic, then runs the measured
// phase in even steps, sampling the figures report.html plots over time
// after each. Stepping RunUntil adds no events, so the run is the same as
// one RunUntil to the end. step is told the simulated time after each
// step and answers whether to go on; run returns false when it stopped
// early (simrun run --max-wall, Ctrl-C).
func (w *world) run(step func(now time.Duration) bool) bool {
	f := w.v.File
	const warmupSteps = 20
	for i := 1; i <= warmupSteps && f.Warmup > 0; i++ {
		at := f.Warmup * time.Duration(i) / warmupSteps
		w.eng.RunUntil(at)
		if !step(at) {
			return false
		}
	}
	w.warmupPackets = w.nicPackets()
	w.resetStats()
	w.sampler = w.newSampler()
	w.sampler.start(w.eng.Now())
	for i := 1; i <= samplesPerRun; i++ {
		at := f.Warmup + f.MeasuredDuration()*time.Duration(i)/samplesPerRun
		w.eng.RunUntil(at)
		w.sampler.sample(at)
		if !step(at) {
			return false
		}
	}
	return true
}

// window is the measured time so far: the measured phase of a run that
// ended, less for one stopped early, and the time run for one stopped in
// its warm-up (whose statistics were never reset).
func (w *world) window() time.Duration {
	if w.sampler == nil {
		return w.eng.Now()
	}
	return w.eng.Now() - w.v.File.Warmup
}

// nicPackets is the frames every NIC of the world sent since the last
// ResetStats.
func (w *world) nicPackets() uint64 {
	var n uint64
	for _, name := range w.hostOrder {
		for _, p := range w.hosts[name].nics {
			n += p.dev.Counters().OPackets
		}
	}
	return n
}

// packets is the frames every NIC sent over the whole run.
func (w *world) packets() uint64 { return w.warmupPackets + w.nicPackets() }

// eventErrors returns the first error an event met while running (a
// fault the model refused), located at the event.
func (w *world) eventErrors() error {
	for i, ev := range w.events {
		if ev.err != nil {
			return w.v.Errorf(fmt.Sprintf("events[%d]", i), "%v", ev.err)
		}
	}
	return nil
}

func (w *world) resetStats() {
	now := w.eng.Now()
	for _, name := range w.hostOrder {
		h := w.hosts[name]
		for _, c := range h.sortedCores() {
			c.ResetStats()
		}
		for _, p := range h.nics {
			p.dev.ResetStats()
		}
		h.mem.ResetStats()
		if h.qat != nil {
			h.qat.ResetStats()
		}
		if h.stack != nil {
			for _, in := range h.stack.instances {
				in.ResetStats()
			}
		}
	}
	for _, l := range w.links {
		l.ResetStats()
	}
	for _, a := range w.apps {
		a.run.ResetStats(now)
	}
}

// figures collects every figure of the variant.
func (w *world) figures() report.Tree {
	t := report.Tree{}
	window := w.window()
	now := w.eng.Now()
	for _, name := range w.hostOrder {
		h := w.hosts[name]
		ht := t.Sub(name)
		for _, p := range h.nics {
			nt := ht.Sub("nic." + p.name)
			nt.AddStruct("", p.dev.Counters())
			for _, x := range p.dev.XStats() {
				nt.Set("xstats."+x.Name, float64(x.Value))
			}
		}
		cpuFigures(ht, h, window)
		hugepageFigures(ht.Sub("hugepages"), h.mem.Stats())
		if h.qat != nil {
			ht.AddStruct("qat", h.qat.Stats())
		}
		if h.stack != nil {
			h.stack.figures(ht)
		}
	}
	for _, l := range w.links {
		t.Sub("links").AddStruct(strings.ReplaceAll(l.Name(), ".", "_"), l.Stats())
	}
	for _, a := range w.apps {
		t.Sub(a.name).AddStruct("", a.run.Figures(now))
	}
	w.activeFigures(t)
	t.Set("sim.events", float64(w.eng.Fired()))
	t.Set("sim.seconds", report.Round(window.Seconds(), 9))
	return t
}

// hugepageFigures reports what a user watches in
// /sys/devices/system/node/nodeN/hugepages: per node and page size, the
// pages reserved, free, in use at peak, and refused requests; sizes with
// no pages reserved are left out.
func hugepageFigures(t report.Tree, s numa.MemoryStats) {
	for _, n := range s.Nodes {
		for _, p := range []struct {
			name string
			st   numa.PoolStats
		}{{"2MiB", n.Pages2M}, {"1GiB", n.Pages1G}} {
			if p.st.TotalPages == 0 && p.st.Failed == 0 {
				continue
			}
			pt := t.Sub(fmt.Sprintf("node%d.%s", n.Node, p.name))
			pt.Set("total", float64(p.st.TotalPages))
			pt.Set("free", float64(p.st.FreePages))
			pt.Set("in_use", float64(p.st.InUsePages))
			pt.Set("peak_in_use", float64(p.st.PeakInUsePages))
			pt.Set("failed", float64(p.st.Failed))
			pt.Set("refused_contiguous", float64(p.st.RefusedContiguous))
		}
	}
	t.Set("bad_requests", float64(s.BadRequests))
	t.Set("double_frees", float64(s.DoubleFrees))
	t.Set("bad_frees", float64(s.BadFrees))
}

// latencies returns the latency distributions of the apps that measure
// one, for report.html.
func (w *world) latencies() []report.Distribution {
	var out []report.Distribution
	for _, a := range w.apps {
		la, ok := a.run.(latencyApp)
		if !ok {
			continue
		}
		lat, cum := la.Latency().Distribution()
		d := report.Distribution{Variant: w.v.Name, App: a.name, Fraction: cum}
		for _, l := range lat {
			d.LatencyUS = append(d.LatencyUS, float64(l)/1e3)
		}
		out = append(out, d)
	}
	return out
}
