package numa_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim/numa"
)

func mustPreset(name string) *numa.Topology {
	t, err := numa.Preset(name)
	Expect(err).NotTo(HaveOccurred())
	return t
}

var _ = Describe("presets", func() {
	It("lists the presets sorted, each described", func() {
		Expect(numa.PresetNames()).To(Equal([]string{"kunpeng920-4826-2p", "xeon-e5-2650v2-2p"}))
		for _, n := range append(numa.PresetNames(), "host") {
			d, ok := numa.PresetDescription(n)
			Expect(ok).To(BeTrue())
			Expect(d).NotTo(BeEmpty())
		}
		_, err := numa.Preset("kunpeng")
		Expect(err).To(MatchError(ContainSubstring(`unknown topology preset "kunpeng"`)))
	})

	It("models 2 x Kunpeng 920-4826: 4 nodes of 24 cores, no SMT, the LKML SLIT", func() {
		t := mustPreset("kunpeng920-4826-2p")
		Expect(t.NumCPUs()).To(Equal(96))
		Expect(t.NumNodes()).To(Equal(4))
		Expect(t.Sockets).To(Equal(2))
		Expect(t.CoresPerSocket()).To(Equal(48))
		Expect(t.ThreadsPerCore()).To(Equal(1))
		Expect(t.GHz).To(Equal(2.6))
		for n := range 4 {
			cpus := t.CPUsOfNode(n)
			Expect(cpus).To(HaveLen(24))
			Expect(cpus[0]).To(Equal(24 * n))
			node, _ := t.Node(n)
			Expect(node.Socket).To(Equal(n / 2))
			Expect(node.MemoryBytes).To(Equal(96 * numa.GiB))
			Expect(node.Hugepages2M).To(Equal(int64(2048)))
		}
		Expect(t.Distances).To(Equal([][]int{
			{10, 12, 20, 22},
			{12, 10, 22, 24},
			{20, 22, 10, 12},
			{22, 24, 12, 10},
		}))
		c, ok := t.CPU(50)
		Expect(ok).To(BeTrue())
		Expect(c).To(Equal(numa.CPU{ID: 50, Core: 2, Socket: 1, Node: 2, Siblings: []int{50}}))
	})

	It("numbers the Xeon E5-2650 v2's CPUs as Linux does: siblings after all first threads", func() {
		t := mustPreset("xeon-e5-2650v2-2p")
		Expect(t.NumCPUs()).To(Equal(32))
		Expect(t.NumNodes()).To(Equal(2))
		Expect(t.ThreadsPerCore()).To(Equal(2))
		Expect(t.CoresPerSocket()).To(Equal(8))
		Expect(t.CPUsOfNode(0)).To(Equal([]int{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}))
		Expect(t.CPUsOfNode(1)).To(Equal([]int{8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}))
		c0, _ := t.CPU(0)
		Expect(c0.Siblings).To(Equal([]int{0, 16}))
		c25, _ := t.CPU(25)
		Expect(c25).To(Equal(numa.CPU{ID: 25, Core: 1, Socket: 1, Node: 1, Siblings: []int{9, 25}}))
		Expect(t.Distance(0, 1)).To(Equal(21))
		Expect(t.Distance(1, 1)).To(Equal(10))
	})

	It("answers lookups of unknown ids without panicking", func() {
		t := mustPreset("xeon-e5-2650v2-2p")
		Expect(t.NodeOfCPU(32)).To(Equal(-1))
		Expect(t.NodeOfCPU(-1)).To(Equal(-1))
		Expect(t.CPUsOfNode(2)).To(BeNil())
		Expect(t.Distance(0, 7)).To(Equal(-1))
		Expect(t.HasCPU(31)).To(BeTrue())
		Expect(t.HasNode(2)).To(BeFalse())
	})

	It("hands out copies, so callers cannot change the machine", func() {
		t := mustPreset("xeon-e5-2650v2-2p")
		t.CPUsOfNode(0)[0] = 99
		Expect(t.CPUsOfNode(0)[0]).To(Equal(0))
	})
})

var _ = Describe("access cost", func() {
	t := mustPresetLater("kunpeng920-4826-2p")

	DescribeTable("AccessFactor is distance/10 on the Kunpeng matrix",
		func(cpu, node int, want float64) {
			Expect(t().AccessFactor(cpu, node)).To(BeNumerically("~", want, 1e-12))
		},
		Entry("local", 0, 0, 1.0),
		Entry("other die, same socket", 0, 1, 1.2),
		Entry("other socket, near die", 0, 2, 2.0),
		Entry("other socket, far die", 0, 3, 2.2),
		Entry("node 1 to node 3", 30, 3, 2.4),
		Entry("node 3 to node 2", 95, 2, 1.2),
		Entry("unknown CPU: no penalty known", 500, 0, 1.0),
	)

	DescribeTable("RemoteBytes charges (d-10)/10 of the bytes",
		func(cpu, node int, n, want int64) {
			Expect(t().RemoteBytes(cpu, node, n)).To(Equal(want))
		},
		Entry("local is free", 0, 0, int64(4096), int64(0)),
		Entry("distance 12: a fifth", 0, 1, int64(4096), int64(819)),
		Entry("distance 20: all", 0, 2, int64(4096), int64(4096)),
		Entry("distance 22", 0, 3, int64(1000), int64(1200)),
		Entry("distance 24", 24, 3, int64(1000), int64(1400)),
		Entry("rounds to nearest", 0, 1, int64(3), int64(1)),
		Entry("no bytes", 0, 3, int64(0), int64(0)),
		Entry("unknown node", 0, 9, int64(100), int64(0)),
		Entry("large counts do not overflow", 0, 3, int64(1)<<60, int64(1383505805528216371)),
	)

	It("gives a device's local CPUs, or all for a device without a node", func() {
		Expect(t().LocalCPUs(3)).To(HaveLen(24))
		Expect(t().LocalCPUs(3)[0]).To(Equal(72))
		Expect(t().LocalCPUs(-1)).To(HaveLen(96))
	})
})

// mustPresetLater defers building a preset to spec run time, for use in
// container nodes.
func mustPresetLater(name string) func() *numa.Topology {
	var t *numa.Topology
	BeforeEach(func() { t = mustPreset(name) })
	return func() *numa.Topology { return t }
}

var _ = Describe("inline Spec", func() {
	valid := func() numa.Spec {
		return numa.Spec{Sockets: 2, NodesPerSocket: 1, CoresPerNode: 4, ThreadsPerCore: 2, GHz: 3, MemoryPerNode: "16GiB"}
	}

	It("builds the machine it describes, with default distances", func() {
		s := valid()
		s.Hugepages = &numa.HugepageConfig{Pages2M: []int64{100, 200}, Pages1G: []int64{1}}
		t, err := s.Build()
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Name).To(Equal("inline"))
		Expect(t.NumCPUs()).To(Equal(16))
		Expect(t.CPUsOfNode(1)).To(Equal([]int{4, 5, 6, 7, 12, 13, 14, 15}))
		Expect(t.Distances).To(Equal([][]int{{10, 20}, {20, 10}}))
		n1, _ := t.Node(1)
		Expect(n1.Hugepages2M).To(Equal(int64(200)))
		Expect(n1.Hugepages1G).To(Equal(int64(1)))
		Expect(n1.MemoryBytes).To(Equal(16 * numa.GiB))
	})

	It("takes a preset with its own hugepages", func() {
		s := numa.Spec{Preset: "xeon-e5-2650v2-2p", Hugepages: &numa.HugepageConfig{Pages1G: []int64{2, 0}}}
		t, err := s.Build()
		Expect(err).NotTo(HaveOccurred())
		n0, _ := t.Node(0)
		Expect([]int64{n0.Hugepages2M, n0.Hugepages1G}).To(Equal([]int64{0, 2}))
	})

	DescribeTable("names the key at fault",
		func(edit func(*numa.Spec), want string) {
			s := valid()
			edit(&s)
			Expect(s.Validate()).To(MatchError(ContainSubstring(want)))
			_, err := s.Build()
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("sockets", func(s *numa.Spec) { s.Sockets = 0 }, "sockets: 0, want at least 1"),
		Entry("nodes_per_socket", func(s *numa.Spec) { s.NodesPerSocket = -1 }, "nodes_per_socket: -1"),
		Entry("cores_per_node", func(s *numa.Spec) { s.CoresPerNode = 0 }, "cores_per_node: 0"),
		Entry("threads_per_core", func(s *numa.Spec) { s.ThreadsPerCore = 9 }, "threads_per_core: 9, want 1 to 8"),
		Entry("too many CPUs", func(s *numa.Spec) { s.CoresPerNode = 100000 }, "more than 8192"),
		Entry("ghz", func(s *numa.Spec) { s.GHz = 0 }, "ghz: 0"),
		Entry("memory_per_node missing", func(s *numa.Spec) { s.MemoryPerNode = "" }, "memory_per_node: missing"),
		Entry("memory_per_node unit", func(s *numa.Spec) { s.MemoryPerNode = "16 GiBs" }, `memory_per_node: size "16 GiBs": unknown unit "GiBs"`),
		Entry("distances rows", func(s *numa.Spec) { s.Distances = [][]int{{10, 20}} }, "distances: distance matrix has 1 rows for 2 nodes"),
		Entry("distances diagonal", func(s *numa.Spec) { s.Distances = [][]int{{10, 20}, {20, 11}} }, "distances[1][1] is 11"),
		Entry("distances remote", func(s *numa.Spec) { s.Distances = [][]int{{10, 10}, {20, 10}} }, "distances[0][1] is 10"),
		Entry("hugepages list length", func(s *numa.Spec) {
			s.Hugepages = &numa.HugepageConfig{Pages2M: []int64{1, 2, 3}}
		}, "hugepages.2MiB: 3 counts for 2 nodes"),
		Entry("hugepages negative", func(s *numa.Spec) {
			s.Hugepages = &numa.HugepageConfig{Pages1G: []int64{1, -2}}
		}, "hugepages.1GiB[1]: -2 is negative"),
		Entry("hugepages exceed memory", func(s *numa.Spec) {
			s.Hugepages = &numa.HugepageConfig{Pages1G: []int64{17}}
		}, "hugepages: node 0: 0 x 2 MiB + 17 x 1 GiB pages exceed memory_per_node 16GiB"),
		Entry("preset with machine keys", func(s *numa.Spec) { s.Preset = "xeon-e5-2650v2-2p" }, "preset: \"xeon-e5-2650v2-2p\" names a whole machine"),
		Entry("unknown preset", func(s *numa.Spec) { *s = numa.Spec{Preset: "pdp11"} }, `preset: unknown preset "pdp11"`),
	)
})

var _ = Describe("ParseSize", func() {
	DescribeTable("accepts binary sizes",
		func(in string, want int64) {
			Expect(numa.ParseSize(in)).To(Equal(want))
		},
		Entry("bytes", "4096", int64(4096)),
		Entry("B", "512B", int64(512)),
		Entry("KiB", "4KiB", 4*numa.KiB),
		Entry("KB is binary", "4KB", 4*numa.KiB),
		Entry("MiB with space", "2 MiB", 2*numa.MiB),
		Entry("MB", "512MB", 512*numa.MiB),
		Entry("GiB", "64GiB", 64*numa.GiB),
		Entry("GB", "96GB", 96*numa.GiB),
		Entry("TiB", "1TiB", numa.TiB),
		Entry("fraction", "1.5GiB", 3*numa.GiB/2),
		Entry("padding", "  8MiB ", 8*numa.MiB),
	)
	DescribeTable("rejects malformed sizes",
		func(in, want string) {
			_, err := numa.ParseSize(in)
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("empty", "", "empty"),
		Entry("no number", "GiB", "no number"),
		Entry("negative", "-1GiB", "no number"),
		Entry("unknown unit", "3 parsecs", `unknown unit "parsecs"`),
		Entry("overflow", "9999999999TiB", "too large"),
		Entry("fractional bytes", "1.5B", "not a whole number of bytes"),
		Entry("two dots", "1.2.3MiB", "invalid syntax"),
	)
	It("formats sizes in the largest exact unit", func() {
		Expect(numa.FormatSize(6 * numa.MiB)).To(Equal("6 MiB"))
		Expect(numa.FormatSize(numa.GiB)).To(Equal("1 GiB"))
		Expect(numa.FormatSize(3000)).To(Equal("3000 B"))
		Expect(numa.FormatSize(0)).To(Equal("0 B"))
	})
})

var _ = Describe("CPU lists", func() {
	DescribeTable("parse and format round trip",
		func(in string, ids []int, canonical string) {
			got, err := numa.ParseList(in)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(ids))
			Expect(numa.FormatList(got)).To(Equal(canonical))
		},
		Entry("empty", "", []int(nil), ""),
		Entry("one", "0\n", []int{0}, "0"),
		Entry("range", "0-3", []int{0, 1, 2, 3}, "0-3"),
		Entry("ranges", "0-1,4,6-7", []int{0, 1, 4, 6, 7}, "0-1,4,6-7"),
		Entry("unsorted, overlapping", "5,0-2,1", []int{0, 1, 2, 5}, "0-2,5"),
		Entry("adjacent singles merge", "0,1,2", []int{0, 1, 2}, "0-2"),
	)
	DescribeTable("rejects malformed lists",
		func(in string) {
			_, err := numa.ParseList(in)
			Expect(err).To(HaveOccurred())
		},
		Entry("backwards", "3-1"), Entry("letters", "a-b"), Entry("stride", "0-7:2"),
		Entry("huge", "0-4000000000"), Entry("empty part", "1,,2"), Entry("negative", "-1"),
	)
})
