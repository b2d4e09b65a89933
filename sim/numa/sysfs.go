package numa

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Files this reader uses (Linux ABI: Documentation/ABI/stable/
// sysfs-devices-node and sysfs-devices-system-cpu, and
// Documentation/admin-guide/cputopology.rst):
//
//	devices/system/cpu/online                          online CPUs
//	devices/system/cpu/cpuN/topology/core_id           core within package
//	devices/system/cpu/cpuN/topology/physical_package_id
//	devices/system/cpu/cpuN/topology/thread_siblings_list
//	devices/system/cpu/cpuN/cpufreq/base_frequency     kHz (intel_pstate)
//	devices/system/cpu/cpuN/cpufreq/cpuinfo_max_freq   kHz
//	devices/system/node/online                         online nodes
//	devices/system/node/nodeN/cpulist
//	devices/system/node/nodeN/meminfo                  "Node N MemTotal: X kB"
//	devices/system/node/nodeN/distance                 one entry per online node
//	devices/system/node/nodeN/hugepages/hugepages-{2048,1048576}kB/nr_hugepages
//	kernel/mm/hugepages/hugepages-{2048,1048576}kB/nr_hugepages (no node dir)
//
// and, beside sysRoot, proc/cpuinfo ("cpu MHz") and proc/meminfo.

// ReadHost reads the machine from a sysfs tree rooted at sysRoot ("/sys"
// for the running host; a temporary directory in tests). /proc files are
// read from the directory "proc" beside sysRoot, so "/sys" pairs with
// "/proc". Errors name the file that could not be read or parsed.
//
// If devices/system/node is absent (kernels without CONFIG_NUMA, some VMs
// and containers), the machine is one node 0 holding every online CPU and
// all memory, and Notes says so. A clock rate that cannot be found is 0,
// with a note.
func ReadHost(sysRoot string) (*Topology, error) {
	procRoot := filepath.Join(filepath.Dir(filepath.Clean(sysRoot)), "proc")
	return readHost(sysRoot, procRoot)
}

type sysReader struct {
	sys, proc string
	notes     []string
}

func (r *sysReader) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *sysReader) path(rel ...string) string {
	return filepath.Join(append([]string{r.sys}, rel...)...)
}

// readString reads a whole small file, trimmed.
func readString(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("host topology: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func readInt(path string) (int64, error) {
	s, err := readString(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("host topology: %s: %q is not an integer", path, s)
	}
	return n, nil
}

func readList(path string) ([]int, error) {
	s, err := readString(path)
	if err != nil {
		return nil, err
	}
	l, err := ParseList(s)
	if err != nil {
		return nil, fmt.Errorf("host topology: %s: %w", path, err)
	}
	return l, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func readHost(sysRoot, procRoot string) (*Topology, error) {
	r := &sysReader{sys: sysRoot, proc: procRoot}
	t := &Topology{Name: HostPreset}
	online, err := readList(r.path("devices/system/cpu/online"))
	if err != nil {
		return nil, err
	}
	if len(online) == 0 {
		return nil, fmt.Errorf("host topology: %s: no online CPUs", r.path("devices/system/cpu/online"))
	}
	sockets := map[int]bool{}
	for _, id := range online {
		c, err := r.readCPU(id)
		if err != nil {
			return nil, err
		}
		sockets[c.Socket] = true
		t.CPUs = append(t.CPUs, c)
	}
	t.Sockets = len(sockets)
	for i := range t.CPUs {
		// thread_siblings_list may name offline CPUs; keep the online ones.
		t.CPUs[i].Siblings = slices.DeleteFunc(t.CPUs[i].Siblings, func(s int) bool { return !slices.Contains(online, s) })
	}

	if exists(r.path("devices/system/node")) {
		err = r.readNodes(t, online)
	} else {
		err = r.singleNode(t, online)
	}
	if err != nil {
		return nil, err
	}
	t.GHz = r.clock(online[0])
	t.Description = fmt.Sprintf("this host: %s, %s, %s", plural(len(t.CPUs), "CPU"), plural(t.Sockets, "socket"), plural(len(t.Nodes), "NUMA node"))
	t.Notes = r.notes
	if t.Notes == nil {
		t.Notes = []string{}
	}
	if err := t.Check(); err != nil {
		return nil, fmt.Errorf("host topology from %s: %w", sysRoot, err)
	}
	return t, nil
}

func (r *sysReader) readCPU(id int) (CPU, error) {
	dir := r.path("devices/system/cpu", fmt.Sprintf("cpu%d", id), "topology")
	core, err := readInt(filepath.Join(dir, "core_id"))
	if err != nil {
		return CPU{}, err
	}
	pkg, err := readInt(filepath.Join(dir, "physical_package_id"))
	if err != nil {
		return CPU{}, err
	}
	if pkg < 0 {
		// Older arm64 kernels without firmware package information
		// report -1.
		r.note("cpu%d: physical_package_id is %d; taken as socket 0", id, pkg)
		pkg = 0
	}
	sib, err := readList(filepath.Join(dir, "thread_siblings_list"))
	if err != nil {
		return CPU{}, err
	}
	if !slices.Contains(sib, id) {
		sib = append(sib, id)
		slices.Sort(sib)
	}
	return CPU{ID: id, Core: int(core), Socket: int(pkg), Siblings: sib}, nil
}

// readNodes fills the nodes from devices/system/node.
func (r *sysReader) readNodes(t *Topology, online []int) error {
	base := r.path("devices/system/node")
	var ids []int
	if exists(filepath.Join(base, "online")) {
		var err error
		if ids, err = readList(filepath.Join(base, "online")); err != nil {
			return err
		}
	} else {
		entries, err := os.ReadDir(base)
		if err != nil {
			return fmt.Errorf("host topology: %w", err)
		}
		for _, e := range entries {
			if n, ok := strings.CutPrefix(e.Name(), "node"); ok {
				if id, err := strconv.Atoi(n); err == nil && id >= 0 {
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
	}
	if len(ids) == 0 {
		return fmt.Errorf("host topology: %s: no online nodes", base)
	}
	nodeOf := map[int]int{}
	for _, id := range ids {
		dir := filepath.Join(base, fmt.Sprintf("node%d", id))
		cpus, err := readList(filepath.Join(dir, "cpulist"))
		if err != nil {
			return err
		}
		// A node's cpulist can name offline CPUs on some kernels.
		cpus = slices.DeleteFunc(cpus, func(c int) bool { return !slices.Contains(online, c) })
		n := Node{ID: id, Socket: -1, CPUs: cpus}
		for _, c := range cpus {
			if prev, dup := nodeOf[c]; dup {
				return fmt.Errorf("host topology: %s: cpu %d is also on node %d", filepath.Join(dir, "cpulist"), c, prev)
			}
			nodeOf[c] = id
		}
		if n.MemoryBytes, err = readMemTotal(filepath.Join(dir, "meminfo"), fmt.Sprintf("Node %d MemTotal:", id)); err != nil {
			return err
		}
		if n.Hugepages2M, n.Hugepages1G, err = r.readHugepages(filepath.Join(dir, "hugepages"), fmt.Sprintf("node %d", id)); err != nil {
			return err
		}
		t.Nodes = append(t.Nodes, n)
	}
	for i := range t.CPUs {
		c := &t.CPUs[i]
		node, ok := nodeOf[c.ID]
		if !ok {
			r.note("cpu%d is online but on no node's cpulist; taken as node %d", c.ID, ids[0])
			node = ids[0]
			t.Nodes[0].CPUs = append(t.Nodes[0].CPUs, c.ID)
			slices.Sort(t.Nodes[0].CPUs)
		}
		c.Node = node
	}
	for i := range t.Nodes {
		if len(t.Nodes[i].CPUs) > 0 {
			t.Nodes[i].Socket = t.CPUs[slices.IndexFunc(t.CPUs, func(c CPU) bool { return c.ID == t.Nodes[i].CPUs[0] })].Socket
		}
	}
	// Distances: nodeN/distance lists one entry per online node, in
	// node order.
	t.Distances = make([][]int, len(ids))
	for i, id := range ids {
		path := filepath.Join(base, fmt.Sprintf("node%d", id), "distance")
		s, err := readString(path)
		if errors.Is(err, fs.ErrNotExist) {
			r.note("%s is missing; Linux's default distances 10 local / 20 remote assumed", path)
			t.Distances = defaultDistances(len(ids))
			break
		}
		if err != nil {
			return err
		}
		if t.Distances[i], err = parseDistanceRow(path, s, len(ids)); err != nil {
			return err
		}
	}
	return nil
}

// singleNode makes node 0 of every online CPU when the kernel shows no
// node directory.
func (r *sysReader) singleNode(t *Topology, online []int) error {
	r.note("%s is absent: one NUMA node assumed, holding all %d online CPUs", r.path("devices/system/node"), len(online))
	n := Node{ID: 0, Socket: t.CPUs[0].Socket, CPUs: slices.Clone(online)}
	for i := range t.CPUs {
		t.CPUs[i].Node = 0
	}
	mem, err := readMemTotal(filepath.Join(r.proc, "meminfo"), "MemTotal:")
	if err != nil {
		r.note("memory size unknown (%v); node 0 has 0 bytes", err)
	}
	n.MemoryBytes = mem
	if n.Hugepages2M, n.Hugepages1G, err = r.readHugepages(r.path("kernel/mm/hugepages"), "machine"); err != nil {
		return err
	}
	t.Nodes = []Node{n}
	t.Distances = [][]int{{LocalDistance}}
	return nil
}

// readMemTotal finds the line starting with prefix in a meminfo file and
// returns its kB figure in bytes.
func readMemTotal(path, prefix string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("host topology: %w", err)
	}
	return parseMemTotal(path, data, prefix)
}

// parseMemTotal is readMemTotal's parser, apart from the I/O so it can be
// fuzzed: "Node 0 MemTotal:       16384000 kB".
func parseMemTotal(path string, data []byte, prefix string) (int64, error) {
	for line := range strings.Lines(string(data)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("host topology: %s: malformed line %q", path, strings.TrimSpace(line))
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<50 {
			return 0, fmt.Errorf("host topology: %s: malformed line %q", path, strings.TrimSpace(line))
		}
		return kb * KiB, nil
	}
	return 0, fmt.Errorf("host topology: %s: no %q line", path, prefix)
}

// parseDistanceRow parses a nodeN/distance file: one distance per online
// node, separated by spaces.
func parseDistanceRow(path, s string, nodes int) ([]int, error) {
	fields := strings.Fields(s)
	if len(fields) != nodes {
		return nil, fmt.Errorf("host topology: %s: %d distances for %d online nodes", path, len(fields), nodes)
	}
	row := make([]int, nodes)
	for i, f := range fields {
		d, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("host topology: %s: %q is not a distance", path, f)
		}
		row[i] = d
	}
	return row, nil
}

// readHugepages reads nr_hugepages for 2 MiB and 1 GiB pages under dir
// (a hugepages directory). A missing size directory means the kernel
// offers no pages of that size: 0. Other sizes (arm64's 64 KiB, 32 MiB)
// are not modelled; reserved pages of those sizes are noted.
func (r *sysReader) readHugepages(dir, who string) (p2m, p1g int64, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("host topology: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name(), "nr_hugepages")
		if !strings.HasPrefix(e.Name(), "hugepages-") {
			continue
		}
		n, err := readInt(path)
		if err != nil {
			return 0, 0, err
		}
		if n < 0 {
			return 0, 0, fmt.Errorf("host topology: %s: negative count %d", path, n)
		}
		switch e.Name() {
		case "hugepages-2048kB":
			p2m = n
		case "hugepages-1048576kB":
			p1g = n
		default:
			if n > 0 {
				r.note("%s: %d reserved %s pages are not modelled", who, n, strings.TrimPrefix(e.Name(), "hugepages-"))
			}
		}
	}
	return p2m, p1g, nil
}

// clock finds the nominal clock rate in GHz: cpufreq's base_frequency
// (intel_pstate), else cpuinfo_max_freq, else /proc/cpuinfo's "cpu MHz"
// of the first CPU (the current rate, which may vary), else 0 with a note.
func (r *sysReader) clock(cpu int) float64 {
	dir := r.path("devices/system/cpu", fmt.Sprintf("cpu%d", cpu), "cpufreq")
	for _, f := range []string{"base_frequency", "cpuinfo_max_freq"} {
		if khz, err := readInt(filepath.Join(dir, f)); err == nil && khz > 0 {
			return float64(khz) / 1e6
		}
	}
	path := filepath.Join(r.proc, "cpuinfo")
	if mhz, ok := cpuinfoMHz(path); ok {
		r.note("clock rate %.3f MHz from %s \"cpu MHz\" (the current rate; cpufreq is not available)", mhz, path)
		return mhz / 1e3
	}
	r.note("clock rate unknown: no cpufreq under %s and no \"cpu MHz\" in %s; GHz is 0", dir, path)
	return 0
}

func cpuinfoMHz(path string) (float64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	return parseCPUInfoMHz(data)
}

// parseCPUInfoMHz finds the first "cpu MHz : 2096.035" line of
// /proc/cpuinfo.
func parseCPUInfoMHz(data []byte) (float64, bool) {
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != "cpu MHz" {
			continue
		}
		mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil && mhz > 0 && mhz < 1e6 {
			return mhz, true
		}
	}
	return 0, false
}

// plural writes "1 socket" or "2 sockets".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
