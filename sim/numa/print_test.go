package numa_test

import (
	"bytes"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/numa"
)

func text(t *numa.Topology, m *numa.Memory) string {
	var b bytes.Buffer
	Expect(numa.WriteText(&b, t, m)).To(Succeed())
	return b.String()
}

func jsonOf(t *numa.Topology, m *numa.Memory) []byte {
	var b bytes.Buffer
	Expect(numa.WriteJSON(&b, t, m)).To(Succeed())
	return b.Bytes()
}

var _ = Describe("printing", func() {
	It("prints the Kunpeng preset with numactl's distance matrix", func() {
		out := text(mustPreset("kunpeng920-4826-2p"), nil)
		for _, line := range []string{
			"CPU(s):               96\n",
			"Thread(s) per core:   1\n",
			"Core(s) per socket:   48\n",
			"Socket(s):            2\n",
			"NUMA node(s):         4\n",
			"CPU MHz:              2600.000\n",
			"NUMA node3 CPU(s):    72-95\n",
			"available: 4 nodes (0-3)\n",
			"node 0 cpus: 0-23\nnode 0 size: 98304 MiB\nnode 0 hugepages: 2048 x 2 MiB, 0 x 1 GiB reserved\n",
			"node 1 cpus: 24-47\n",
			"node 2 cpus: 48-71\n",
			// numactl -H, byte for byte, trailing spaces included.
			"node distances:\n" +
				"node   0   1   2   3 \n" +
				"  0:  10  12  20  22 \n" +
				"  1:  12  10  22  24 \n" +
				"  2:  20  22  10  12 \n" +
				"  3:  22  24  12  10 \n",
		} {
			Expect(out).To(ContainSubstring(line))
		}
	})

	It("prints the Xeon preset with sibling ranges and free hugepages", func() {
		t := mustPreset("xeon-e5-2650v2-2p")
		m, err := numa.NewMemory(t, nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = m.Alloc(hw.AllocRequest{Node: 1, Size: 20 * numa.MiB})
		Expect(err).NotTo(HaveOccurred())
		out := text(t, m)
		Expect(out).To(ContainSubstring("CPU(s):               32\n"))
		Expect(out).To(ContainSubstring("Thread(s) per core:   2\n"))
		Expect(out).To(ContainSubstring("node 0 cpus: 0-7,16-23\n"))
		Expect(out).To(ContainSubstring("node 1 cpus: 8-15,24-31\n"))
		Expect(out).To(ContainSubstring("node 1 hugepages: 512 x 2 MiB (502 free), 0 x 1 GiB (0 free)\n"))
		Expect(out).To(ContainSubstring("node distances:\nnode   0   1 \n  0:  10  21 \n  1:  21  10 \n"))
		Expect(out).To(ContainSubstring("notes:\n  - memory 64 GiB per node is an assumption"))
	})

	It("prints the host", func() {
		t, err := numa.Preset("host")
		if err != nil {
			Skip("no readable /sys: " + err.Error())
		}
		out := text(t, nil)
		Expect(out).To(ContainSubstring("node distances:\n"))
		Expect(strings.Count(out, " cpus: ")).To(Equal(t.NumNodes()))
	})

	DescribeTable("writes stable JSON that round-trips",
		func(name string) {
			t, err := numa.Preset(name)
			if err != nil {
				Skip(err.Error())
			}
			a, b := jsonOf(t, nil), jsonOf(t, nil)
			Expect(a).To(Equal(b))
			back, err := numa.ReadJSON(bytes.NewReader(a))
			Expect(err).NotTo(HaveOccurred())
			Expect(back).To(Equal(t))
			Expect(jsonOf(back, nil)).To(Equal(a))
		},
		Entry("kunpeng", "kunpeng920-4826-2p"),
		Entry("xeon", "xeon-e5-2650v2-2p"),
		Entry("host", "host"),
	)

	It("writes every CPU, node, the matrix and the hugepage accounting in a fixed order", func() {
		t := mustPreset("xeon-e5-2650v2-2p")
		m, err := numa.NewMemory(t, nil)
		Expect(err).NotTo(HaveOccurred())
		raw := jsonOf(t, m)
		Expect(string(raw)).To(HavePrefix("{\n  \"name\": \"xeon-e5-2650v2-2p\",\n  \"description\":"))
		var doc struct {
			NumCPUs int        `json:"num_cpus"`
			CPUs    []numa.CPU `json:"cpus"`
			Nodes   []struct {
				CPUList string `json:"cpulist"`
			} `json:"nodes"`
			Distances [][]int          `json:"distances"`
			Notes     []string         `json:"notes"`
			Hugepages numa.MemoryStats `json:"hugepages"`
		}
		Expect(json.Unmarshal(raw, &doc)).To(Succeed())
		Expect(doc.NumCPUs).To(Equal(32))
		Expect(doc.CPUs).To(HaveLen(32))
		Expect(doc.CPUs[17]).To(Equal(numa.CPU{ID: 17, Core: 1, Socket: 0, Node: 0, Siblings: []int{1, 17}}))
		Expect(doc.Nodes[1].CPUList).To(Equal("8-15,24-31"))
		Expect(doc.Distances).To(Equal([][]int{{10, 21}, {21, 10}}))
		Expect(doc.Notes).NotTo(BeEmpty())
		Expect(doc.Hugepages.Nodes[1].Pages2M.TotalPages).To(Equal(int64(512)))
		// The accounting is output only; reading ignores it.
		back, err := numa.ReadJSON(bytes.NewReader(raw))
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(t))
	})

	DescribeTable("rejects inconsistent JSON",
		func(edit func(string) string, want string) {
			raw := string(jsonOf(mustPreset("xeon-e5-2650v2-2p"), nil))
			_, err := numa.ReadJSON(strings.NewReader(edit(raw)))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("count", func(s string) string { return strings.Replace(s, `"num_cpus": 32`, `"num_cpus": 31`, 1) },
			"num_cpus is 31 but the CPUs give 32"),
		Entry("cpulist", func(s string) string { return strings.Replace(s, `"0-7,16-23"`, `"0-7"`, 1) },
			`cpulist "0-7" disagrees`),
		Entry("unknown field", func(s string) string { return strings.Replace(s, `"name"`, `"nmae"`, 1) },
			`unknown field "nmae"`),
		Entry("bad distance", func(s string) string {
			return strings.Replace(s, "[\n      10,\n      21\n    ]", "[\n      10,\n      5\n    ]", 1)
		}, "distance from node 0 to node 1 is 5"),
	)
})
