// Package scenario is the scenario-file contract of Savanna (format
// version 1, docs/scenarios.md): the schema, strict loading with errors
// that name file, line, column and key, and variants expanded by dotted
// key paths.
package scenario

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/sim/numa"
)

// FormatVersion is the scenario format this package reads.
const FormatVersion = 1

// File is a scenario file as written. Sections whose shape depends on a
// kind (a machine preset or inline topology, an app's own keys) are kept
// as YAML nodes and decoded strictly once the kind is known, so their
// errors still name the line and key.
type File struct {
	Version     int              `yaml:"version"`
	Name        string           `yaml:"name"`
	Description string           `yaml:"description"`
	Reproduces  string           `yaml:"reproduces"`
	Seed        *uint64          `yaml:"seed"`
	Duration    time.Duration    `yaml:"duration"`
	Warmup      time.Duration    `yaml:"warmup"`
	Hosts       map[string]*Host `yaml:"hosts"`
	Links       []Link           `yaml:"links"`
	Events      []Event          `yaml:"events"`
	Capture     []string         `yaml:"capture"`
	Variants    yaml.Node        `yaml:"variants"`
	Expect      []string         `yaml:"expect"`
	// Reproduction puts the published figures the scenario reproduces
	// beside Savanna's, for docs/reproduction.md (simrun reproduce).
	Reproduction []Reproduction `yaml:"reproduction"`
	// Sweep runs every variant over a grid of dotted keys and several
	// seeds (sweep.go).
	Sweep *Sweep `yaml:"sweep"`
}

// Reproduction is one published figure and the expression over the
// scenario's figures that gives Savanna's counterpart (reproduction.go
// checks the rows).
type Reproduction struct {
	// Figure names the published figure ("Redis SET, Gazelle (req/s)").
	Figure string `yaml:"figure"`
	// Kind says what the row is: predicted, declared or derived
	// (RowKinds; required).
	Kind string `yaml:"kind"`
	// Published is the article's value, kept as the article writes it.
	Published Published `yaml:"published"`
	// Savanna is an expression over figures, as in expect.
	Savanna string `yaml:"savanna"`
	// Sensitivity names the cost ops a predicted row is most exposed to,
	// for simrun reproduce --sensitivity.
	Sensitivity []string `yaml:"sensitivity"`
	// Note explains a gap or a difference of units.
	Note string `yaml:"note"`
}

// Host is one simulated machine.
type Host struct {
	// Machine is a NUMA preset name (simrun topo lists them) or an inline
	// topology.
	Machine yaml.Node `yaml:"machine"`
	// Hugepages reserves hugepages per node, as nr_hugepages does.
	Hugepages *numa.HugepageConfig `yaml:"hugepages"`
	NICs      []NIC                `yaml:"nics"`
	QAT       []yaml.Node          `yaml:"qat"`
	Stack     *Stack               `yaml:"stack"`
	// Apps are decoded by kind; each has at least kind and name.
	Apps []yaml.Node `yaml:"apps"`
	// Cost names a cost-model file (relative to the scenario) or gives
	// overrides inline.
	Cost *Cost `yaml:"cost"`
}

// NIC is one port of a host: the NIC model's keys (sim/nic PortConfig)
// plus the address the host's stack gives it.
type NIC struct {
	nic.PortConfig `yaml:",inline"`
	// IP is the port's address with its prefix length ("10.0.0.1/24").
	IP string `yaml:"ip"`
}

// Stack is a host's network stack.
type Stack struct {
	// Kind is lstack (Savanna's user-space stack) or kernel (the same
	// engines charged the Linux path's costs).
	Kind           string `yaml:"kind"`
	Cores          []int  `yaml:"cores"`
	MaxConnections int    `yaml:"max_connections"`
	// Congestion is newreno or cubic.
	Congestion string `yaml:"congestion"`
	// MbufNode places each instance's mbuf pool: "core" (the default)
	// on the NUMA node of the instance's core, as Gazelle does; "nic" on
	// the port's node, as a DPDK application that passes the port's
	// socket id to rte_pktmbuf_pool_create does.
	MbufNode string `yaml:"mbuf_node"`
	// Neighbors is cold (the default: ARP resolves each peer on first
	// use, and a burst of connections larger than the ARP queue loses
	// SYNs until the initial RTO) or warm (the stack starts knowing the
	// MAC of every stack host on its links, as a test bed whose hosts
	// have talked before does).
	Neighbors string `yaml:"neighbors"`
	// Tunables are stack settings by name (docs/scenarios.md).
	Tunables map[string]yaml.Node `yaml:"tunables"`
}

// Cost selects the cost model of a host: an embedded model by name
// (model: kunpeng920, sim/cost.ModelKeys) or a file relative to the
// scenario (file:), never both; overrides apply on top of either.
type Cost struct {
	Model     string               `yaml:"model"`
	File      string               `yaml:"file"`
	Overrides map[string]CostEntry `yaml:"overrides"`
}

// CostEntry overrides one price (see sim/cost): an override replaces the
// whole entry, its uncertainty and spread included.
type CostEntry struct {
	Value        float64 `yaml:"value"`
	Unit         string  `yaml:"unit"`
	Source       string  `yaml:"source"`
	Uncertainty  float64 `yaml:"uncertainty"`
	Spread       float64 `yaml:"spread"`
	SpreadSource string  `yaml:"spread_source"`
}

// Link joins two NICs: the NIC model's link keys (sim/nic LinkConfig:
// ends, latency, jitter, bandwidth, loss, duplicate, reorder, corrupt,
// flaps ...).
type Link = nic.LinkConfig

// Event is a timed action; exactly one action key is set.
type Event struct {
	At       time.Duration `yaml:"at"`
	Reload   string        `yaml:"reload"`
	LinkDown string        `yaml:"link_down"`
	LinkUp   string        `yaml:"link_up"`
	QATFault *QATFault     `yaml:"qat_fault"`
	QATClear *QATFault     `yaml:"qat_clear"`
	StopApp  string        `yaml:"stop_app"`
	StartApp string        `yaml:"start_app"`
}

// QATFault injects or clears a fault on a host's QAT device.
type QATFault struct {
	Host   string        `yaml:"host"`
	Device int           `yaml:"device"`
	Kind   string        `yaml:"kind"`
	Rate   float64       `yaml:"rate"`
	For    time.Duration `yaml:"for"`
}

// DefaultDuration is the measured phase of a file that gives no duration.
const DefaultDuration = time.Second

// MeasuredDuration is the measured phase: duration, or DefaultDuration
// when the file gives none.
func (f *File) MeasuredDuration() time.Duration {
	if f.Duration == 0 {
		return DefaultDuration
	}
	return f.Duration
}

// Span is the simulated time a run of the file takes: its warm-up and
// its measured phase.
func (f *File) Span() time.Duration { return f.Warmup + f.MeasuredDuration() }
