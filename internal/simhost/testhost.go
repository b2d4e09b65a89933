package simhost

import (
	"fmt"
	"github.com/savanna-sim/savanna/internal/costops"
	"reflect"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Defaults of a NICConfig: the machine and NIC of the Gazelle and
// Tengine articles, so that a spec's figures are those of the bundled
// scenarios' hosts unless it says otherwise.
const (
	// DefaultMachine is the machine preset a NIC is built on.
	DefaultMachine = "xeon-e5-2650v2-2p"
	// DefaultModel is the NIC preset.
	DefaultModel = "hi1822-25g"
	// DefaultHugepages2M is the 2 MiB pages reserved on node 0: enough
	// for the pools of any spec's host, far below the machine's memory.
	DefaultHugepages2M = 256
)

// NICConfig is a simulated port on a machine of its own, as a spec
// builds it by hand rather than from a scenario file. Zero fields take
// the defaults named.
type NICConfig struct {
	// Name is the port's name; its MAC is derived from it and ID.
	Name string
	// ID is the DPDK port id (mbuf.port of what it receives).
	ID uint16
	// Model is the NIC preset (DefaultModel).
	Model string
	// Speed overrides the preset's link speed ("1Gbps"): a link between
	// two ports runs at the slower one's.
	Speed string
	// Machine is the machine preset (DefaultMachine); its clock prices
	// the cores the NIC makes.
	Machine string
	// Hugepages is the machine's hugepage reservation (DefaultHugepages2M
	// pages of 2 MiB on node 0).
	Hugepages numa.HugepageConfig
	// Queues is the rx and tx queue pairs (1).
	Queues int
	// MTU is the port's MTU (1500, as rte_eth_dev_configure takes 0).
	MTU int
	// RxOffloads and TxOffloads are the offloads enabled (none).
	RxOffloads hw.RxOffloads
	TxOffloads hw.TxOffloads
	// RSSHashTypes are the RSS hash types (every type the preset knows
	// when there are several queues, none for one, as the rig's ports).
	RSSHashTypes hw.RSSHashType
	// RxRing and TxRing are descriptor counts (the preset's defaults).
	RxRing, TxRing int
	// Mbufs is the mbufs of each rx queue's pool (2 × rx ring + 1024,
	// as the rig's ports).
	Mbufs int
	// MbufSize is the data room per mbuf, headroom included
	// (nic.DefaultMbufSize).
	MbufSize int
}

// NIC is a configured and started port, its machine's memory, one mbuf
// pool per rx queue on the port's node, and the prices of the machine's
// cores.
type NIC struct {
	// Port is the port, started.
	Port *nic.Port
	// Memory is the machine's memory, which holds the pools.
	Memory *numa.Memory
	// Pools are the rx queues' pools: queue q's is Pools[q], which
	// whatever transmits on queue q takes its mbufs from too.
	Pools []*nic.Mempool
	// Prices are the default cost model's prices at the machine's clock.
	Prices *sim.Prices

	eng *sim.Engine
}

// NewNIC builds the machine of cfg and its port, and configures, sets
// up and starts the port as a DPDK application's init does.
func NewNIC(eng *sim.Engine, cfg NICConfig) (*NIC, error) {
	wrap := func(err error) error { return fmt.Errorf("simhost %s: %w", cfg.Name, err) }
	if cfg.Machine == "" {
		cfg.Machine = DefaultMachine
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Queues == 0 {
		cfg.Queues = 1
	}
	if cfg.Hugepages.Pages2M == nil && cfg.Hugepages.Pages1G == nil {
		cfg.Hugepages.Pages2M = numa.PageCounts{DefaultHugepages2M}
	}
	topo, err := numa.Preset(cfg.Machine)
	if err != nil {
		return nil, wrap(err)
	}
	mem, err := numa.NewMemory(topo, &cfg.Hugepages)
	if err != nil {
		return nil, wrap(err)
	}
	port, err := nic.NewPort(eng, cfg.ID, nic.PortConfig{Name: cfg.Name, Model: cfg.Model, Speed: cfg.Speed})
	if err != nil {
		return nil, wrap(err)
	}
	if cfg.RSSHashTypes == 0 && cfg.Queues > 1 {
		cfg.RSSHashTypes = port.Preset().RSSHashTypes
	}
	conf := hw.PortConf{RxQueues: cfg.Queues, TxQueues: cfg.Queues, MTU: cfg.MTU,
		RxOffloads: cfg.RxOffloads, TxOffloads: cfg.TxOffloads, RSSHashTypes: cfg.RSSHashTypes}
	rings := nic.Rings{RxRing: cfg.RxRing, TxRing: cfg.TxRing, Mbufs: cfg.Mbufs, MbufSize: cfg.MbufSize}
	pools, err := nic.Setup(port, conf, rings, mem, nil)
	if err != nil {
		return nil, wrap(err)
	}
	n := &NIC{Port: port, Memory: mem, Pools: pools, Prices: cost.For(costops.Table()).Default().Prices(topo.GHz), eng: eng}
	return n, nil
}

// NewCore returns an idle core of the NIC's machine, CPU cpu, priced by
// Prices. A spinning core is a poll-mode lcore (see sim.NewCore).
func (n *NIC) NewCore(cpu int, spins bool) (*sim.Core, error) {
	c, ok := n.Memory.Topology().CPU(cpu)
	if !ok {
		return nil, fmt.Errorf("simhost %s: CPU %d does not exist on %s", n.Port.Name(), cpu, n.Memory.Topology().Name)
	}
	return sim.NewCore(n.eng, cpu, c.Node, n.Prices, spins), nil
}

// BindApp binds queue q of port to core and attaches app, a program that
// drives the queue itself (pktgen, testpmd), as the rig wires one: the
// app's work is charged to the layer named layer and its burst calls to
// "layer;driver".
func BindApp(core *sim.Core, port *nic.Port, q int, layer string, app sim.Poller) error {
	if err := port.BindQueue(q, core.Meter(layer+";"+LayerDriver)); err != nil {
		return err
	}
	core.AttachAs(layer, app)
	return nil
}

// HostConfig is a host with a stack: a NIC and one stack instance per
// queue, each on a core of its own.
type HostConfig struct {
	// NIC is the host's port and machine. Its MTU and transmit offloads
	// are the instances' too.
	NIC NICConfig
	// Address is the instances' IPv4 address with its prefix length.
	Address string
	// Mode is the instances' stack: the user-space one or the kernel's.
	Mode lstack.Mode
	// TCP is the instances' TCP configuration, used as given; the zero
	// Config stands for tcp.DefaultConfig(), which is what most specs
	// want.
	TCP tcp.Config
	// CPU is the first instance's CPU; queue q's instance runs on CPU+q.
	CPU int
	// Sleep makes user-space instances' cores sleep when idle instead of
	// spinning, so that a spec sees what wakes them. Kernel-mode cores
	// always sleep.
	Sleep bool
}

// Host is a NIC with a stack instance on each of its queues, each bound
// to its core with BindStack, so that a kernel-mode host is priced as
// the rig prices one.
type Host struct {
	*NIC
	// Cores and Instances are queue q's core and instance at index q.
	Cores     []*sim.Core
	Instances []*lstack.Instance
	// Core and Instance are queue 0's: the only ones of most hosts.
	Core     *sim.Core
	Instance *lstack.Instance
}

// NewHost builds a host as the rig builds one from a scenario's stack
// section: an instance per queue, started, its core woken when a peer
// shares an ARP frame, and the instances of the port peers. Queue 0's
// instance draws its randomness from the engine's stream "tcp:NAME",
// queue q's from "tcp:NAME:q".
func NewHost(eng *sim.Engine, cfg HostConfig) (*Host, error) {
	n, err := NewNIC(eng, cfg.NIC)
	if err != nil {
		return nil, err
	}
	h := &Host{NIC: n}
	name := cfg.NIC.Name
	if reflect.ValueOf(cfg.TCP).IsZero() {
		cfg.TCP = tcp.DefaultConfig()
	}
	spins := cfg.Mode == lstack.ModeLstack && !cfg.Sleep
	for q, pool := range n.Pools {
		core, err := n.NewCore(cfg.CPU+q, spins)
		if err != nil {
			return nil, err
		}
		stream := "tcp:" + name
		if q > 0 {
			stream = fmt.Sprintf("tcp:%s:%d", name, q)
		}
		in, err := lstack.New(lstack.Config{
			Iface:      iface.Config{Address: cfg.Address, MTU: cfg.NIC.MTU},
			TCP:        cfg.TCP,
			Mode:       cfg.Mode,
			TxOffloads: cfg.NIC.TxOffloads,
		}, n.Port, q, pool, eng.RNG(stream))
		if err != nil {
			return nil, fmt.Errorf("simhost %s: %w", name, err)
		}
		if err := BindStack(core, n.Port, q, in, Placement{}); err != nil {
			return nil, fmt.Errorf("simhost %s: %w", name, err)
		}
		in.Start(eng.Now())
		in.SetWake(core.Wake)
		h.Cores = append(h.Cores, core)
		h.Instances = append(h.Instances, in)
	}
	if len(h.Instances) > 1 {
		for _, in := range h.Instances {
			in.SetPeers(h.Instances)
		}
	}
	h.Core, h.Instance = h.Cores[0], h.Instances[0]
	return h, nil
}
