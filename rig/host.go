package rig

import (
	"fmt"
	"net/netip"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/rig/scenario"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
	"github.com/savanna-sim/savanna/sim/qat"
)

// defaultHugepages2M is the 2 MiB pages reserved per node when a scenario
// reserves none: 1 GiB per node, a common DPDK set-up (and enough for the
// mbuf pools of several ports).
const defaultHugepages2M = 512

// host is one simulated machine of a variant.
type host struct {
	name   string
	key    string // "hosts.NAME", for errors
	topo   *numa.Topology
	mem    *numa.Memory
	cost   *cost.Model
	prices *sim.Prices
	cores  map[int]*sim.Core
	nics   []*port
	// qat is the host's QAT driver, nil when the host has no devices.
	qat *qat.Service
	// stack is the host's network stack, nil when it has none.
	stack *hostStack
	// reload is the graceful reload of the host's HTTP server, nil when
	// it runs none.
	reload func() error
}

// port is a NIC of a host with what the rig set up on it.
type port struct {
	name  string
	dev   *nic.Port
	ip    netip.Prefix
	pools []*nic.Mempool
	// users are the queues handed out so far.
	users int
	// nextLocal is each queue's cursor of local ports for the
	// connections the host's apps open (rssPorts), shared by every app
	// on the port, as a host's kernel or stack hands out ephemeral ports
	// once: two generators on one host must not pick the same 4-tuple.
	// Key -1 is the single-queue port's.
	nextLocal map[int]*uint16
}

// localCursor is queue q's cursor of local ports, from 20000.
func (p *port) localCursor(q int) *uint16 {
	if p.nextLocal == nil {
		p.nextLocal = map[int]*uint16{}
	}
	c := p.nextLocal[q]
	if c == nil {
		c = new(uint16)
		*c = 20000
		p.nextLocal[q] = c
	}
	return c
}

// buildHost makes a host's machine, memory, cost model and NICs.
func (w *world) buildHost(name string, h *scenario.Host, portID *uint16) (*host, error) {
	key := "hosts." + name
	topo, err := w.machine(key+".machine", &h.Machine)
	if err != nil {
		return nil, err
	}
	hp := h.Hugepages
	if hp == nil && totalHugepages(topo) == 0 {
		hp = &numa.HugepageConfig{Pages2M: []int64{defaultHugepages2M}}
	}
	if hp != nil {
		if err := hp.Validate(); err != nil {
			return nil, w.v.Errorf(key+".hugepages", "%v", err)
		}
	}
	mem, err := numa.NewMemory(topo, hp)
	if err != nil {
		return nil, w.v.Errorf(key+".hugepages", "%v", err)
	}
	model, err := w.costModel(key+".cost", h.Cost)
	if err != nil {
		return nil, err
	}
	out := &host{name: name, key: key, topo: mem.Topology(), mem: mem, cost: model,
		prices: model.Prices(topo.GHz), cores: map[int]*sim.Core{}}
	for i, n := range h.NICs {
		nk := fmt.Sprintf("%s.nics[%d]", key, i)
		if err := n.PortConfig.Validate(); err != nil {
			return nil, w.v.Errorf(nk, "%v", err)
		}
		if !out.topo.HasNode(n.NUMANode) {
			return nil, w.v.Errorf(nk+".numa_node", "node %d does not exist on %s (nodes 0..%d)", n.NUMANode, out.topo.Name, out.topo.NumNodes()-1)
		}
		dev, err := nic.NewPort(w.eng, *portID, n.PortConfig)
		if err != nil {
			return nil, w.v.Errorf(nk, "%v", err)
		}
		*portID++
		p := &port{name: n.Name, dev: dev}
		if n.IP != "" {
			p.ip, _ = netip.ParsePrefix(n.IP)
		}
		out.nics = append(out.nics, p)
	}
	if len(h.QAT) > 0 {
		var cfg qat.Config
		for i := range h.QAT {
			qk := fmt.Sprintf("%s.qat[%d]", key, i)
			var dc qat.DeviceConfig
			if err := w.v.Decode(qk, &h.QAT[i], &dc); err != nil {
				return nil, err
			}
			if !out.topo.HasNode(dc.NUMANode) {
				return nil, w.v.Errorf(qk+".numa_node", "node %d does not exist on %s", dc.NUMANode, out.topo.Name)
			}
			cfg.Devices = append(cfg.Devices, dc)
		}
		svc, err := qat.NewService(cfg, qat.Options{Memory: mem, RNG: w.eng.RNG("qat:" + name), Clock: w.eng.Now})
		if err != nil {
			return nil, w.v.Errorf(key+".qat", "%v", err)
		}
		out.qat = svc
	}
	return out, nil
}

// machine resolves a host's machine key: a preset name or an inline
// topology.
func (w *world) machine(key string, n *yaml.Node) (*numa.Topology, error) {
	if n.Kind == yaml.ScalarNode {
		t, err := numa.Preset(n.Value)
		if err != nil {
			return nil, w.v.Errorf(key, "%v", err)
		}
		return t, nil
	}
	var spec numa.Spec
	if err := w.v.Decode(key, n, &spec); err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, w.v.Errorf(key, "%v", err)
	}
	t, err := spec.Build()
	if err != nil {
		return nil, w.v.Errorf(key, "%v", err)
	}
	return t, nil
}

// costModel loads the default model, an embedded model by name
// (cost.model), a named file (relative to the scenario) and inline
// overrides. Loading checked that model and file are not both given.
func (w *world) costModel(key string, c *scenario.Cost) (*cost.Model, error) {
	m := w.defaultCost
	if c == nil {
		return m, nil
	}
	if c.Model != "" {
		loaded, err := cost.For(costops.Table()).Model(c.Model)
		if err != nil {
			return nil, w.v.Errorf(key+".model", "%v", err)
		}
		m = loaded
	}
	if c.File != "" {
		// Resolved within the scenario's folder (or an --allow-path),
		// and read without quoting the file in errors.
		loaded, err := w.s.LoadCost(c.File)
		if err != nil {
			return nil, w.v.Errorf(key+".file", "%v", err)
		}
		m = loaded
	}
	if len(c.Overrides) > 0 {
		over := make(map[string]cost.Entry, len(c.Overrides))
		for k, e := range c.Overrides {
			over[k] = cost.Entry{Value: e.Value, Unit: e.Unit, Source: e.Source,
				Uncertainty: e.Uncertainty, Spread: e.Spread, SpreadSource: e.SpreadSource}
		}
		var err error
		if m, err = m.WithOverrides(w.s.Path+": "+key+".overrides", over); err != nil {
			return nil, w.v.Errorf(key+".overrides", "%v", err)
		}
	}
	return m, nil
}

// core returns the simulated core for CPU id of the host, making it on
// first use. A spinning core is a poll-mode lcore.
func (h *host) core(w *world, id int, spins bool) (*sim.Core, error) {
	if c, ok := h.cores[id]; ok {
		return c, nil
	}
	cpu, ok := h.topo.CPU(id)
	if !ok {
		return nil, fmt.Errorf("CPU %d does not exist on %s (CPUs 0..%d)", id, h.topo.Name, h.topo.NumCPUs()-1)
	}
	c := sim.NewCore(w.eng, id, cpu.Node, h.prices, spins)
	// Spread draws from the core's own stream, named by host and CPU so
	// that another host's cores or the order cores are made in never
	// change it; a model without spread makes none (docs/cost-model.md).
	if sp := h.cost.Spreads(); sp != nil {
		c.SetSpread(sp, w.eng.RNG(fmt.Sprintf("spread:%s:cpu%d", h.name, id)))
	}
	// Hardware threads of one physical core share its throughput at the
	// machine's SMT yield (docs/numa.md); siblings made earlier are
	// linked both ways.
	if y := h.topo.SMTYield; y > 0 {
		for _, sid := range cpu.Siblings {
			if s, ok := h.cores[sid]; ok && sid != id {
				c.AddSibling(y, s)
				s.AddSibling(y, c)
			}
		}
	}
	h.cores[id] = c
	return c, nil
}

// sortedCores returns the host's cores by CPU id.
func (h *host) sortedCores() []*sim.Core {
	ids := make([]int, 0, len(h.cores))
	for id := range h.cores {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	out := make([]*sim.Core, len(ids))
	for i, id := range ids {
		out[i] = h.cores[id]
	}
	return out
}

func (h *host) nic(name string) *port {
	for _, p := range h.nics {
		if p.name == name {
			return p
		}
	}
	return nil
}

func totalHugepages(t *numa.Topology) int64 {
	var n int64
	for _, node := range t.Nodes {
		n += node.Hugepages2M + node.Hugepages1G
	}
	return n
}
