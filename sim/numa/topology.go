package numa

import (
	"fmt"
	"slices"
	"sort"
)

// Linux's SLIT conventions (ACPI 6.5, 5.2.17 "System Locality Distance
// Information Table"): a node's distance to itself is 10, and values are
// relative to it, so 20 means "about twice as far". When firmware gives no
// SLIT, Linux assumes LOCAL_DISTANCE 10 and REMOTE_DISTANCE 20
// (include/linux/topology.h).
const (
	LocalDistance  = 10
	RemoteDistance = 20
	// maxDistance is the largest SLIT entry; ACPI uses 255 for
	// "unreachable", which Linux passes through to sysfs.
	maxDistance = 255
)

// CPU is one logical CPU (a hardware thread).
type CPU struct {
	// ID is the logical CPU id Linux gives it (cpuN).
	ID int `json:"id"`
	// Core is the core id within its socket (topology/core_id).
	Core int `json:"core"`
	// Socket is the physical package id (topology/physical_package_id).
	Socket int `json:"socket"`
	// Node is the NUMA node the CPU belongs to.
	Node int `json:"node"`
	// Siblings are the logical CPUs sharing its core, itself included
	// (topology/thread_siblings_list), sorted.
	Siblings []int `json:"siblings"`
}

// Node is one NUMA node.
type Node struct {
	// ID is the node id (nodeN).
	ID int `json:"id"`
	// Socket is the socket the node's CPUs are on, -1 for a node without
	// CPUs (memory only).
	Socket int `json:"socket"`
	// CPUs are the node's logical CPUs, sorted.
	CPUs []int `json:"cpus"`
	// MemoryBytes is the node's memory (nodeN/meminfo MemTotal).
	MemoryBytes int64 `json:"memory_bytes"`
	// Hugepages2M and Hugepages1G are the hugepages reserved on the node
	// (nodeN/hugepages/hugepages-2048kB/nr_hugepages and -1048576kB).
	// NewMemory takes its pools from them unless told otherwise.
	Hugepages2M int64 `json:"hugepages_2m"`
	Hugepages1G int64 `json:"hugepages_1g"`
}

// Topology is a machine: its CPUs, NUMA nodes and distances. Build one
// with Preset, ReadHost, Spec.Build or ReadJSON, which check it; a
// Topology put together by hand should pass Check before use.
type Topology struct {
	// Name is the preset name, "host", or the scenario's name for it.
	Name string `json:"name"`
	// Description is one line on what the machine is.
	Description string `json:"description"`
	// Sockets is the number of physical packages.
	Sockets int `json:"sockets"`
	// GHz is the nominal clock rate; 0 when unknown (see Notes).
	GHz float64 `json:"ghz"`
	// CPUs are the online logical CPUs, sorted by ID.
	CPUs []CPU `json:"cpus"`
	// Nodes are the NUMA nodes, sorted by ID.
	Nodes []Node `json:"nodes"`
	// Distances is the SLIT matrix; Distances[i][j] is the distance from
	// Nodes[i] to Nodes[j] (by position, which equals the id when node
	// ids are dense, as they are except on unusual hosts).
	Distances [][]int `json:"distances"`
	// Notes say what was assumed or could not be read.
	Notes []string `json:"notes"`
	// SMTYield is the combined throughput of two busy hardware threads of
	// one core relative to one thread alone (1.25: together they do 1.25
	// times one thread's work), which the simulated cores use to slow a
	// thread whose sibling is busy (sim.Core.SetSiblings). 0 means the
	// threads are not modelled as sharing: a machine without SMT, or one
	// whose yield is unknown (docs/numa.md).
	SMTYield float64 `json:"smt_yield,omitempty"`
	// SMTYieldSource says where SMTYield comes from.
	SMTYieldSource string `json:"smt_yield_source,omitempty"`
}

// NumNodes returns the number of NUMA nodes.
func (t *Topology) NumNodes() int { return len(t.Nodes) }

// NumCPUs returns the number of logical CPUs.
func (t *Topology) NumCPUs() int { return len(t.CPUs) }

// cpuAt finds a CPU by id (binary search: CPUs are sorted), or nil.
func (t *Topology) cpuAt(id int) *CPU {
	i := sort.Search(len(t.CPUs), func(i int) bool { return t.CPUs[i].ID >= id })
	if i < len(t.CPUs) && t.CPUs[i].ID == id {
		return &t.CPUs[i]
	}
	return nil
}

// nodeIndex finds a node's position in Nodes and Distances, or -1.
func (t *Topology) nodeIndex(id int) int {
	i := sort.Search(len(t.Nodes), func(i int) bool { return t.Nodes[i].ID >= id })
	if i < len(t.Nodes) && t.Nodes[i].ID == id {
		return i
	}
	return -1
}

// CPU returns the CPU with the given id.
func (t *Topology) CPU(id int) (CPU, bool) {
	if c := t.cpuAt(id); c != nil {
		return *c, true
	}
	return CPU{}, false
}

// Node returns the node with the given id.
func (t *Topology) Node(id int) (Node, bool) {
	if i := t.nodeIndex(id); i >= 0 {
		return t.Nodes[i], true
	}
	return Node{}, false
}

// HasCPU says whether the machine has that logical CPU.
func (t *Topology) HasCPU(id int) bool { return t.cpuAt(id) != nil }

// HasNode says whether the machine has that node.
func (t *Topology) HasNode(id int) bool { return t.nodeIndex(id) >= 0 }

// CPUsOfNode returns a copy of the node's CPU ids, sorted; nil for an
// unknown node.
func (t *Topology) CPUsOfNode(node int) []int {
	if i := t.nodeIndex(node); i >= 0 {
		return slices.Clone(t.Nodes[i].CPUs)
	}
	return nil
}

// NodeOfCPU returns the node of a CPU, or -1 for an unknown CPU (as
// rte_lcore_to_socket_id has no answer for it either).
func (t *Topology) NodeOfCPU(cpu int) int {
	if c := t.cpuAt(cpu); c != nil {
		return c.Node
	}
	return -1
}

// Distance returns the SLIT distance between two nodes, or -1 if either
// is unknown.
func (t *Topology) Distance(a, b int) int {
	i, j := t.nodeIndex(a), t.nodeIndex(b)
	if i < 0 || j < 0 || i >= len(t.Distances) || j >= len(t.Distances[i]) {
		return -1 // unknown node, or a hand-made topology that fails Check
	}
	return t.Distances[i][j]
}

// NodeIDs returns the node ids, sorted.
func (t *Topology) NodeIDs() []int {
	ids := make([]int, len(t.Nodes))
	for i, n := range t.Nodes {
		ids[i] = n.ID
	}
	return ids
}

// CPUIDs returns the logical CPU ids, sorted.
func (t *Topology) CPUIDs() []int {
	ids := make([]int, len(t.CPUs))
	for i, c := range t.CPUs {
		ids[i] = c.ID
	}
	return ids
}

// CoresPerSocket is lscpu's "Core(s) per socket": distinct (socket, core)
// pairs over sockets, rounded down.
func (t *Topology) CoresPerSocket() int {
	if t.Sockets == 0 {
		return 0
	}
	return t.numCores() / t.Sockets
}

// ThreadsPerCore is lscpu's "Thread(s) per core".
func (t *Topology) ThreadsPerCore() int {
	if n := t.numCores(); n > 0 {
		return len(t.CPUs) / n
	}
	return 0
}

func (t *Topology) numCores() int {
	type key struct{ socket, core int }
	seen := map[key]bool{}
	for _, c := range t.CPUs {
		seen[key{c.Socket, c.Core}] = true
	}
	return len(seen)
}

// Clone returns a deep copy.
func (t *Topology) Clone() *Topology {
	c := *t
	c.CPUs = make([]CPU, len(t.CPUs))
	for i, cpu := range t.CPUs {
		cpu.Siblings = slices.Clone(cpu.Siblings)
		c.CPUs[i] = cpu
	}
	c.Nodes = make([]Node, len(t.Nodes))
	for i, n := range t.Nodes {
		n.CPUs = slices.Clone(n.CPUs)
		c.Nodes[i] = n
	}
	c.Distances = make([][]int, len(t.Distances))
	for i, row := range t.Distances {
		c.Distances[i] = slices.Clone(row)
	}
	c.Notes = slices.Clone(t.Notes)
	return &c
}

// Check verifies the topology is consistent: at least one node and one
// CPU; CPUs and nodes sorted with unique ids; every CPU on an existing
// node and listed by it, and every CPU a node lists existing; siblings
// contain the CPU itself and exist; a square distance matrix with 10 on
// the diagonal and off-diagonal entries in (10, 255]; non-negative memory
// and hugepages that fit in the node's memory.
func (t *Topology) Check() error {
	if len(t.Nodes) == 0 {
		return fmt.Errorf("topology %q: no NUMA nodes", t.Name)
	}
	if len(t.CPUs) == 0 {
		return fmt.Errorf("topology %q: no CPUs", t.Name)
	}
	if t.Sockets < 1 {
		return fmt.Errorf("topology %q: sockets %d, want at least 1", t.Name, t.Sockets)
	}
	if t.GHz < 0 {
		return fmt.Errorf("topology %q: negative clock rate %g GHz", t.Name, t.GHz)
	}
	for i := range t.CPUs {
		c := &t.CPUs[i]
		if i > 0 && c.ID <= t.CPUs[i-1].ID {
			return fmt.Errorf("topology %q: cpu %d: CPUs not sorted by unique id", t.Name, c.ID)
		}
		if c.ID < 0 {
			return fmt.Errorf("topology %q: negative cpu id %d", t.Name, c.ID)
		}
		ni := t.nodeIndex(c.Node)
		if ni < 0 {
			return fmt.Errorf("topology %q: cpu %d: on node %d, which does not exist", t.Name, c.ID, c.Node)
		}
		if !slices.Contains(t.Nodes[ni].CPUs, c.ID) {
			return fmt.Errorf("topology %q: cpu %d: node %d does not list it", t.Name, c.ID, c.Node)
		}
		if !slices.Contains(c.Siblings, c.ID) {
			return fmt.Errorf("topology %q: cpu %d: siblings %v do not include itself", t.Name, c.ID, c.Siblings)
		}
		for _, s := range c.Siblings {
			if t.cpuAt(s) == nil {
				return fmt.Errorf("topology %q: cpu %d: sibling %d does not exist", t.Name, c.ID, s)
			}
		}
	}
	for i, n := range t.Nodes {
		if i > 0 && n.ID <= t.Nodes[i-1].ID {
			return fmt.Errorf("topology %q: node %d: nodes not sorted by unique id", t.Name, n.ID)
		}
		if n.ID < 0 {
			return fmt.Errorf("topology %q: negative node id %d", t.Name, n.ID)
		}
		for _, id := range n.CPUs {
			c := t.cpuAt(id)
			if c == nil || c.Node != n.ID {
				return fmt.Errorf("topology %q: node %d: lists cpu %d, which is not one of its CPUs", t.Name, n.ID, id)
			}
		}
		if !slices.IsSorted(n.CPUs) {
			return fmt.Errorf("topology %q: node %d: CPUs not sorted", t.Name, n.ID)
		}
		if n.MemoryBytes < 0 || n.Hugepages2M < 0 || n.Hugepages1G < 0 {
			return fmt.Errorf("topology %q: node %d: negative memory or hugepage count", t.Name, n.ID)
		}
		if n.MemoryBytes > 0 {
			if hp := hugeBytes(n.Hugepages2M, n.Hugepages1G); hp < 0 || hp > n.MemoryBytes {
				return fmt.Errorf("topology %q: node %d: %d x 2 MiB + %d x 1 GiB hugepages exceed its %s of memory",
					t.Name, n.ID, n.Hugepages2M, n.Hugepages1G, FormatSize(n.MemoryBytes))
			}
		}
	}
	return checkDistances(len(t.Nodes), t.Distances, func(i, j int) string {
		return fmt.Sprintf("topology %q: distance from node %d to node %d", t.Name, t.Nodes[i].ID, t.Nodes[j].ID)
	})
}

// hugeBytes is the memory held by the given hugepage counts, or -1 on
// overflow.
func hugeBytes(n2m, n1g int64) int64 {
	const lim = 1 << 62
	if n2m > lim/(2*MiB) || n1g > lim/GiB {
		return -1
	}
	return n2m*2*MiB + n1g*GiB
}

// checkDistances checks an n x n SLIT matrix; where names an entry for
// errors. The rule is Linux's own (slit_valid in drivers/acpi/numa/srat.c,
// and of_numa_parse_distance_map_v1 for device trees): 10 on the diagonal,
// more than 10 elsewhere; Linux ignores a table that breaks it, so sysfs
// never shows one.
func checkDistances(n int, d [][]int, where func(i, j int) string) error {
	if len(d) != n {
		return fmt.Errorf("distance matrix has %d rows for %d nodes", len(d), n)
	}
	for i := range d {
		if len(d[i]) != n {
			return fmt.Errorf("distance matrix row %d has %d entries for %d nodes", i, len(d[i]), n)
		}
		for j, v := range d[i] {
			switch {
			case i == j && v != LocalDistance:
				return fmt.Errorf("%s is %d; a node's distance to itself is %d", where(i, j), v, LocalDistance)
			case i != j && (v <= LocalDistance || v > maxDistance):
				return fmt.Errorf("%s is %d; remote distances lie in %d..%d", where(i, j), v, LocalDistance+1, maxDistance)
			}
		}
	}
	return nil
}

// defaultDistances is Linux's matrix when firmware has no SLIT.
func defaultDistances(n int) [][]int {
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
		for j := range d[i] {
			d[i][j] = RemoteDistance
			if i == j {
				d[i][j] = LocalDistance
			}
		}
	}
	return d
}
