package numa

import (
	"fmt"
	"slices"
)

// Spec describes a machine inline in a scenario file, or names a preset:
//
//	topology:
//	  sockets: 2
//	  nodes_per_socket: 1
//	  cores_per_node: 8
//	  threads_per_core: 2
//	  ghz: 2.6
//	  memory_per_node: 64GiB
//	  distances: [[10, 21], [21, 10]]   # optional; default 10 local, 20 remote
//	  hugepages: {2MiB: [1024]}
//
//	topology: {preset: kunpeng920-4826-2p, hugepages: {2MiB: [4096]}}
//
// CPUs are numbered as Linux numbers them on x86 servers: the first thread
// of every core, socket by socket and node by node, then the second
// threads in the same order (so with 2 x 8 x 2: 0-7 socket 0, 8-15 socket
// 1, 16-23 their siblings on socket 0, 24-31 on socket 1). Node ids run
// socket by socket. Core ids count from 0 within each socket.
type Spec struct {
	// Preset names a preset (see PresetNames) or "host"; the machine
	// keys must then be left out, and only hugepages may be given.
	Preset string `yaml:"preset"`
	// Name names the machine in output; default "inline".
	Name           string  `yaml:"name"`
	Sockets        int     `yaml:"sockets"`
	NodesPerSocket int     `yaml:"nodes_per_socket"`
	CoresPerNode   int     `yaml:"cores_per_node"`
	ThreadsPerCore int     `yaml:"threads_per_core"`
	GHz            float64 `yaml:"ghz"`
	// MemoryPerNode is a size such as "64GiB" (see ParseSize).
	MemoryPerNode string `yaml:"memory_per_node"`
	// Distances is the SLIT matrix, one row per node; optional.
	Distances [][]int `yaml:"distances"`
	// Hugepages reserves hugepages per node; optional. With a preset, it
	// replaces the preset's reservation.
	Hugepages *HugepageConfig `yaml:"hugepages"`
	// SMTYield is two busy threads' combined throughput relative to one
	// (Topology.SMTYield); optional, 0 (no sharing modelled) by default,
	// from 1 to 2 when threads_per_core is above 1.
	SMTYield float64 `yaml:"smt_yield"`
	// smtYieldSource is a preset's source for SMTYield.
	smtYieldSource string
}

// Limits on inline machines, to catch typos before they allocate.
const (
	maxSpecCPUs    = 8192
	maxSpecThreads = 8
)

// Validate checks the spec; errors name the key at fault.
func (s *Spec) Validate() error {
	if s.Preset != "" {
		if s.Sockets != 0 || s.NodesPerSocket != 0 || s.CoresPerNode != 0 || s.ThreadsPerCore != 0 ||
			s.GHz != 0 || s.MemoryPerNode != "" || s.Distances != nil || s.SMTYield != 0 {
			return fmt.Errorf("preset: %q names a whole machine; only hugepages may be given beside it", s.Preset)
		}
		if s.Preset != HostPreset && !isPreset(s.Preset) {
			return fmt.Errorf("preset: unknown preset %q (known: %v and %q)", s.Preset, PresetNames(), HostPreset)
		}
		if s.Hugepages != nil {
			if err := s.Hugepages.Validate(); err != nil {
				return fmt.Errorf("hugepages.%w", err)
			}
		}
		return nil
	}
	if s.Sockets < 1 {
		return fmt.Errorf("sockets: %d, want at least 1", s.Sockets)
	}
	if s.NodesPerSocket < 1 {
		return fmt.Errorf("nodes_per_socket: %d, want at least 1", s.NodesPerSocket)
	}
	if s.CoresPerNode < 1 {
		return fmt.Errorf("cores_per_node: %d, want at least 1", s.CoresPerNode)
	}
	if s.ThreadsPerCore < 1 || s.ThreadsPerCore > maxSpecThreads {
		return fmt.Errorf("threads_per_core: %d, want 1 to %d", s.ThreadsPerCore, maxSpecThreads)
	}
	if n := int64(s.Sockets) * int64(s.NodesPerSocket) * int64(s.CoresPerNode) * int64(s.ThreadsPerCore); n > maxSpecCPUs {
		return fmt.Errorf("cores_per_node: %d logical CPUs in all, more than %d", n, maxSpecCPUs)
	}
	if s.SMTYield != 0 && (s.ThreadsPerCore < 2 || !(s.SMTYield >= 1 && s.SMTYield <= 2)) {
		return fmt.Errorf("smt_yield: %g, want 0 (not modelled) or, with threads_per_core above 1, two threads' combined throughput from 1 to 2 (e.g. 1.25)", s.SMTYield)
	}
	if !(s.GHz > 0 && s.GHz < 100) {
		return fmt.Errorf("ghz: %g, want a clock rate in GHz above 0 (e.g. 2.6)", s.GHz)
	}
	if s.MemoryPerNode == "" {
		return fmt.Errorf("memory_per_node: missing (e.g. 64GiB)")
	}
	mem, err := ParseSize(s.MemoryPerNode)
	if err != nil {
		return fmt.Errorf("memory_per_node: %w", err)
	}
	if mem <= 0 {
		return fmt.Errorf("memory_per_node: %q, want more than 0", s.MemoryPerNode)
	}
	nodes := s.Sockets * s.NodesPerSocket
	if s.Distances != nil {
		err := checkDistances(nodes, s.Distances, func(i, j int) string { return fmt.Sprintf("distances[%d][%d]", i, j) })
		if err != nil {
			return fmt.Errorf("distances: %w", err)
		}
	}
	if s.Hugepages != nil {
		p2m, p1g, err := s.Hugepages.perNode(nodes)
		if err != nil {
			return fmt.Errorf("hugepages.%w", err)
		}
		for i := range p2m {
			if hp := hugeBytes(p2m[i], p1g[i]); hp < 0 || hp > mem {
				return fmt.Errorf("hugepages: node %d: %d x 2 MiB + %d x 1 GiB pages exceed memory_per_node %s",
					i, p2m[i], p1g[i], s.MemoryPerNode)
			}
		}
	}
	return nil
}

// Build validates the spec and makes its topology (for a preset, the
// preset with the spec's hugepages).
func (s *Spec) Build() (*Topology, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Preset != "" {
		t, err := Preset(s.Preset)
		if err != nil {
			return nil, fmt.Errorf("preset: %w", err)
		}
		if s.Hugepages != nil {
			return t.WithHugepages(*s.Hugepages)
		}
		return t, nil
	}
	mem, _ := ParseSize(s.MemoryPerNode) // checked by Validate
	nodes := s.Sockets * s.NodesPerSocket
	coresPerSocket := s.NodesPerSocket * s.CoresPerNode
	totalCores := s.Sockets * coresPerSocket
	t := &Topology{
		Name:        s.Name,
		Description: fmt.Sprintf("%d sockets x %d nodes x %d cores x %d threads, %g GHz", s.Sockets, s.NodesPerSocket, s.CoresPerNode, s.ThreadsPerCore, s.GHz),
		Sockets:     s.Sockets,
		GHz:         s.GHz,
		CPUs:        make([]CPU, totalCores*s.ThreadsPerCore),
		Nodes:       make([]Node, nodes),
		Distances:   s.Distances,
		Notes:       []string{},
		SMTYield:    s.SMTYield,
	}
	if s.SMTYield > 0 {
		t.SMTYieldSource = s.smtYieldSource
		if t.SMTYieldSource == "" {
			t.SMTYieldSource = "the scenario's smt_yield"
		}
	}
	if t.Name == "" {
		t.Name = "inline"
	}
	if t.Distances == nil {
		t.Distances = defaultDistances(nodes)
	} else {
		t.Distances = (&Topology{Distances: s.Distances}).Clone().Distances
	}
	for n := range t.Nodes {
		t.Nodes[n] = Node{ID: n, Socket: n / s.NodesPerSocket, MemoryBytes: mem}
	}
	for g := range totalCores { // g: the core's index over the machine
		socket := g / coresPerSocket
		node := g / s.CoresPerNode
		siblings := make([]int, s.ThreadsPerCore)
		for th := range siblings {
			siblings[th] = th*totalCores + g
		}
		for _, id := range siblings {
			t.CPUs[id] = CPU{ID: id, Core: g % coresPerSocket, Socket: socket, Node: node, Siblings: slices.Clone(siblings)}
		}
	}
	for _, c := range t.CPUs {
		t.Nodes[c.Node].CPUs = append(t.Nodes[c.Node].CPUs, c.ID)
	}
	if s.Hugepages != nil {
		var err error
		if t, err = t.WithHugepages(*s.Hugepages); err != nil {
			return nil, err
		}
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	return t, nil
}
