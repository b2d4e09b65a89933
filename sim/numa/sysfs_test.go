package numa_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim/numa"
)

// writeTree writes files (path relative to root -> content) under root.
func writeTree(root string, files map[string]string) {
	for rel, content := range files {
		p := filepath.Join(root, rel)
		Expect(os.MkdirAll(filepath.Dir(p), 0o755)).To(Succeed())
		Expect(os.WriteFile(p, []byte(content), 0o644)).To(Succeed())
	}
}

// fakeCPU adds one CPU's topology files.
func fakeCPU(files map[string]string, id, core, pkg int, siblings string) {
	d := "sys/devices/system/cpu/cpu" + strconv.Itoa(id) + "/topology/"
	files[d+"core_id"] = strconv.Itoa(core) + "\n"
	files[d+"physical_package_id"] = strconv.Itoa(pkg) + "\n"
	files[d+"thread_siblings_list"] = siblings + "\n"
}

// twoSocketTree is a fake 2-socket, 2-node, 2-threads-per-core machine
// with 8 logical CPUs numbered as x86 Linux does, one of them offline.
func twoSocketTree() map[string]string {
	f := map[string]string{
		"sys/devices/system/cpu/online":                                            "0-6\n", // cpu7 offline
		"sys/devices/system/node/online":                                           "0-1\n",
		"sys/devices/system/node/node0/cpulist":                                    "0-1,4-5\n",
		"sys/devices/system/node/node1/cpulist":                                    "2-3,6\n",
		"sys/devices/system/node/node0/distance":                                   "10 21\n",
		"sys/devices/system/node/node1/distance":                                   "21 10\n",
		"sys/devices/system/node/node0/meminfo":                                    "Node 0 MemTotal:       16384000 kB\nNode 0 MemFree:        1000 kB\n",
		"sys/devices/system/node/node1/meminfo":                                    "Node 1 MemTotal:       8192000 kB\n",
		"sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages":    "512\n",
		"sys/devices/system/node/node0/hugepages/hugepages-1048576kB/nr_hugepages": "2\n",
		"sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages":    "256\n",
		"sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages": "0\n",
		"sys/devices/system/cpu/cpu0/cpufreq/base_frequency":                       "2600000\n",
		"proc/cpuinfo": "processor\t: 0\ncpu MHz\t\t: 1200.000\n",
	}
	fakeCPU(f, 0, 0, 0, "0,4")
	fakeCPU(f, 1, 1, 0, "1,5")
	fakeCPU(f, 2, 0, 1, "2,6")
	fakeCPU(f, 3, 1, 1, "3,7")
	fakeCPU(f, 4, 0, 0, "0,4")
	fakeCPU(f, 5, 1, 0, "1,5")
	fakeCPU(f, 6, 0, 1, "2,6")
	return f
}

var _ = Describe("reading a fake sysfs tree", func() {
	var root string
	BeforeEach(func() { root = GinkgoT().TempDir() })

	It("parses a two-node machine", func() {
		writeTree(root, twoSocketTree())
		t, err := numa.ReadHost(filepath.Join(root, "sys"))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.NumCPUs()).To(Equal(7))
		Expect(t.NumNodes()).To(Equal(2))
		Expect(t.Sockets).To(Equal(2))
		Expect(t.GHz).To(Equal(2.6))
		Expect(t.CPUsOfNode(0)).To(Equal([]int{0, 1, 4, 5}))
		Expect(t.CPUsOfNode(1)).To(Equal([]int{2, 3, 6}))
		Expect(t.Distances).To(Equal([][]int{{10, 21}, {21, 10}}))
		c3, _ := t.CPU(3)
		Expect(c3).To(Equal(numa.CPU{ID: 3, Core: 1, Socket: 1, Node: 1, Siblings: []int{3}}), "offline sibling 7 dropped")
		n0, _ := t.Node(0)
		Expect(n0).To(Equal(numa.Node{ID: 0, Socket: 0, CPUs: []int{0, 1, 4, 5}, MemoryBytes: 16384000 * 1024, Hugepages2M: 512, Hugepages1G: 2}))
		Expect(t.Notes).To(BeEmpty())
	})

	It("falls back to cpu MHz from /proc/cpuinfo, and notes it", func() {
		f := twoSocketTree()
		delete(f, "sys/devices/system/cpu/cpu0/cpufreq/base_frequency")
		writeTree(root, f)
		t, err := numa.ReadHost(filepath.Join(root, "sys"))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.GHz).To(Equal(1.2))
		Expect(t.Notes).To(ContainElement(ContainSubstring(`"cpu MHz"`)))
	})

	It("gives a clock rate of 0 with a note when none can be found", func() {
		f := twoSocketTree()
		delete(f, "sys/devices/system/cpu/cpu0/cpufreq/base_frequency")
		f["proc/cpuinfo"] = "processor\t: 0\nBogoMIPS\t: 200.00\n"
		writeTree(root, f)
		t, err := numa.ReadHost(filepath.Join(root, "sys"))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.GHz).To(BeZero())
		Expect(t.Notes).To(ContainElement(ContainSubstring("clock rate unknown")))
	})

	It("treats a machine without a node directory as one node, and says so", func() {
		f := map[string]string{
			"sys/devices/system/cpu/online":                         "0-3\n",
			"sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages": "64\n",
			"proc/meminfo": "MemTotal:        4000000 kB\nMemFree: 1 kB\n",
			"proc/cpuinfo": "cpu MHz\t\t: 2096.035\n",
		}
		for i := range 4 {
			fakeCPU(f, i, i, 0, strconv.Itoa(i))
		}
		writeTree(root, f)
		t, err := numa.ReadHost(filepath.Join(root, "sys"))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.NumNodes()).To(Equal(1))
		Expect(t.CPUsOfNode(0)).To(Equal([]int{0, 1, 2, 3}))
		Expect(t.Distances).To(Equal([][]int{{10}}))
		n0, _ := t.Node(0)
		Expect(n0.MemoryBytes).To(Equal(int64(4000000 * 1024)))
		Expect(n0.Hugepages2M).To(Equal(int64(64)))
		Expect(t.Notes).To(ContainElement(ContainSubstring("devices/system/node is absent: one NUMA node assumed, holding all 4 online CPUs")))
	})

	It("assumes Linux's default distances when a distance file is missing", func() {
		f := twoSocketTree()
		delete(f, "sys/devices/system/node/node1/distance")
		writeTree(root, f)
		t, err := numa.ReadHost(filepath.Join(root, "sys"))
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Distances).To(Equal([][]int{{10, 20}, {20, 10}}))
		Expect(t.Notes).To(ContainElement(ContainSubstring("node1/distance is missing")))
	})

	DescribeTable("names the file it could not read or parse",
		func(edit func(map[string]string), want string) {
			f := twoSocketTree()
			edit(f)
			writeTree(root, f)
			_, err := numa.ReadHost(filepath.Join(root, "sys"))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("missing core_id", func(f map[string]string) { delete(f, "sys/devices/system/cpu/cpu2/topology/core_id") },
			"cpu2/topology/core_id: no such file"),
		Entry("bad package id", func(f map[string]string) { f["sys/devices/system/cpu/cpu1/topology/physical_package_id"] = "x\n" },
			`cpu1/topology/physical_package_id: "x" is not an integer`),
		Entry("bad online list", func(f map[string]string) { f["sys/devices/system/cpu/online"] = "0-\n" },
			"cpu/online: list"),
		Entry("missing meminfo", func(f map[string]string) { delete(f, "sys/devices/system/node/node1/meminfo") },
			"node1/meminfo: no such file"),
		Entry("meminfo without MemTotal", func(f map[string]string) { f["sys/devices/system/node/node1/meminfo"] = "Node 1 MemFree: 3 kB\n" },
			`node1/meminfo: no "Node 1 MemTotal:" line`),
		Entry("short distance row", func(f map[string]string) { f["sys/devices/system/node/node0/distance"] = "10\n" },
			"node0/distance: 1 distances for 2 online nodes"),
		Entry("bad distance", func(f map[string]string) { f["sys/devices/system/node/node0/distance"] = "10 far\n" },
			`node0/distance: "far" is not a distance`),
		Entry("a CPU on two nodes", func(f map[string]string) { f["sys/devices/system/node/node1/cpulist"] = "1-3,6\n" },
			"node1/cpulist: cpu 1 is also on node 0"),
		Entry("bad hugepage count", func(f map[string]string) {
			f["sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages"] = "many\n"
		}, `hugepages-2048kB/nr_hugepages: "many" is not an integer`),
	)
})

// readFile reads a small /sys file for the host specs.
func readFile(path string) string {
	b, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(b))
}

// countList counts the ids of a kernel cpulist, independently of
// numa.ParseList.
func countList(s string) int {
	n := 0
	for part := range strings.SplitSeq(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, ok := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if ok {
			b, _ = strconv.Atoi(hi)
		}
		n += b - a + 1
	}
	return n
}

var _ = Describe("the host preset", func() {
	var t *numa.Topology
	BeforeEach(func() {
		if _, err := os.Stat("/sys/devices/system/cpu/online"); err != nil {
			Skip("no /sys/devices/system/cpu/online on this machine")
		}
		var err error
		t, err = numa.Preset("host")
		Expect(err).NotTo(HaveOccurred())
	})

	It("agrees with /sys read directly", func() {
		Expect(t.NumCPUs()).To(Equal(countList(readFile("/sys/devices/system/cpu/online"))))
		entries, err := os.ReadDir("/sys/devices/system/node")
		if err != nil {
			Expect(t.NumNodes()).To(Equal(1))
			return
		}
		var nodes []int
		for _, e := range entries {
			if id, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "node")); err == nil && strings.HasPrefix(e.Name(), "node") {
				nodes = append(nodes, id)
			}
		}
		Expect(t.NumNodes()).To(Equal(len(nodes)))
		for _, id := range nodes {
			cpulist := readFile("/sys/devices/system/node/node" + strconv.Itoa(id) + "/cpulist")
			Expect(t.CPUsOfNode(id)).To(HaveLen(countList(cpulist)), "node %d", id)
			Expect(numa.FormatList(t.CPUsOfNode(id))).To(Equal(cpulist), "node %d", id)
		}
	})

	It("agrees with lscpu -p=CPU,NODE", func() {
		if _, err := exec.LookPath("lscpu"); err != nil {
			Skip("lscpu is not installed")
		}
		out, err := exec.Command("lscpu", "-p=CPU,NODE").Output()
		Expect(err).NotTo(HaveOccurred())
		seen := 0
		for line := range strings.Lines(string(out)) {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			cpuS, nodeS, _ := strings.Cut(line, ",")
			cpu, err := strconv.Atoi(cpuS)
			Expect(err).NotTo(HaveOccurred())
			node := 0 // lscpu leaves NODE empty on a machine without NUMA
			if nodeS != "" {
				node, err = strconv.Atoi(nodeS)
				Expect(err).NotTo(HaveOccurred())
			}
			Expect(t.NodeOfCPU(cpu)).To(Equal(node), "cpu %d", cpu)
			seen++
		}
		Expect(seen).To(Equal(t.NumCPUs()))
	})
})
