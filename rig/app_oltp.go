package rig

import (
	"fmt"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/apps/oltp"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// irqSlice is how long a thread runs on a core that also takes a kernel
// stack's interrupts before the interrupt work gets a turn: the model's
// stand-in for preemption by an interrupt, which Linux takes at once
// (hardirq entry, then softirq on irq_exit). It is a granularity of the
// simulation, not a price: nothing is charged for it. docs/oltp.md shows
// how coarser slices, interrupts waiting behind queries, widen the gap.
const irqSlice = time.Microsecond

type oltpServerSpec struct {
	AppCommon         `yaml:",inline"`
	oltp.ServerConfig `yaml:",inline"`
	// Cores are the CPUs mysqld's threads may run on. Default: every CPU
	// of the machine but the lcores of an lstack stack (they poll). A
	// kernel stack's cores take the NIC's interrupts and run threads too,
	// as Linux's do; a thread on such a core runs in slices of irqSlice
	// so that the interrupt work is not held up behind a whole query.
	Cores []int `yaml:"cores"`
}

type oltpServerRunner struct {
	s       *oltp.Server
	bridges []*lstack.Bridge
}

func (r oltpServerRunner) ResetStats(now time.Duration) {
	r.s.ResetStats(now)
	for _, b := range r.bridges {
		b.ResetStats()
	}
}

// Completed is the statements the server executed.
func (r oltpServerRunner) Completed(time.Duration) (uint64, string) { return r.s.Queries(), "queries" }

func (r oltpServerRunner) Figures(now time.Duration) any {
	t := report.Tree{}
	t.AddStruct("", r.s.Stats(now))
	t.AddStruct("sched", r.s.Scheduler().Stats())
	t.Set("sched.cores", float64(r.s.Scheduler().CPUs()))
	for _, b := range r.bridges {
		t.Accumulate("bridge", b.Stats())
	}
	return t
}

// buildOLTPServer runs mysqld's threads on the host's application cores,
// with a bridge on each stack lcore (Gazelle's asymmetric model).
func buildOLTPServer(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec oltpServerSpec
	hs, err := w.stackAppSetup(h, key, node, &spec)
	if err != nil {
		return "", nil, err
	}
	router := lstack.NewRouter(32)
	var bridges []*lstack.Bridge
	for i, in := range hs.instances {
		core := h.cores[hs.cores[i]]
		b, err := lstack.NewBridge(in, router, core.Wake)
		if err != nil {
			return "", nil, w.v.Errorf(key, "%v", err)
		}
		// The bridge serves the app's socket calls on the stack's lcore.
		simhost.BindBridge(w.eng, core, b)
		bridges = append(bridges, b)
	}
	dedicated := hs.mode == lstack.ModeLstack
	cores := spec.Cores
	if len(cores) == 0 {
		for _, c := range h.topo.CPUs {
			if !dedicated || !slices.Contains(hs.cores, c.ID) {
				cores = append(cores, c.ID)
			}
		}
		if len(cores) == 0 {
			return "", nil, w.v.Errorf(key+".cores", "every CPU of host %s is a stack core; leave some for mysqld's threads", h.name)
		}
	}
	sched := oltp.NewScheduler()
	seen := map[int]bool{}
	for i, id := range cores {
		ck := fmt.Sprintf("%s.cores[%d]", key, i)
		if seen[id] {
			return "", nil, w.v.Errorf(ck, "CPU %d is listed twice", id)
		}
		seen[id] = true
		shared := slices.Contains(hs.cores, id)
		if shared && dedicated {
			return "", nil, w.v.Errorf(ck, "CPU %d is an lstack lcore (it polls its queue); mysqld's threads need other CPUs", id)
		}
		core, err := h.core(w, id, false)
		if err != nil {
			return "", nil, w.v.Errorf(ck, "%v", err)
		}
		var slice time.Duration
		if shared {
			slice = irqSlice
		}
		w.attach(core, sched.AddCPU(core.Wake, slice))
	}
	s, err := oltp.NewServer(spec.ServerConfig, sched, router, bridges)
	if err != nil {
		return "", nil, w.v.Errorf(key+".port", "%v", err)
	}
	return spec.Name, oltpServerRunner{s: s, bridges: bridges}, nil
}

type oltpClientSpec struct {
	AppCommon         `yaml:",inline"`
	oltp.ClientConfig `yaml:",inline"`
	ClientApp         `yaml:",inline"`
}

type oltpClientRunner struct{ c *oltp.Client }

func (r oltpClientRunner) ResetStats(now time.Duration)  { r.c.ResetStats(now) }
func (r oltpClientRunner) Figures(now time.Duration) any { return r.c.Stats(now) }
func (r oltpClientRunner) Latency() *latency.Recorder    { return r.c.Latency() }

// Completed is the statements answered.
func (r oltpClientRunner) Completed(time.Duration) (uint64, string) {
	return r.c.Statements(), "queries"
}

// buildOLTPClient runs benchmarksql's terminals on every instance of the
// host's stack, each instance's connections on source ports that RSS
// steers back to it.
func buildOLTPClient(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec oltpClientSpec
	hs, remote, err := w.clientSetup(h, key, node, &spec, 3306)
	if err != nil {
		return "", nil, err
	}
	var eps []oltp.Endpoint
	for q, in := range hs.instances {
		eps = append(eps, oltp.Endpoint{Instance: in, Remote: remote, Port: rssPorts(hs.port, remote, q)})
	}
	c, err := oltp.NewClient(spec.ClientConfig, eps, w.eng.RNG("oltp-client:"+h.name))
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	for q, site := range c.Sites() {
		w.attach(h.cores[hs.cores[q]], site)
	}
	return spec.Name, oltpClientRunner{c}, nil
}
