package numa_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/numa"
)

// smallMemory is the Xeon preset with 1024 x 2 MiB pages on each node
// (2048 MiB) and 2 x 1 GiB pages on node 0 only.
func smallMemory() *numa.Memory {
	m, err := numa.NewMemory(mustPreset("xeon-e5-2650v2-2p"), &numa.HugepageConfig{
		Pages2M: []int64{1024, 1024}, Pages1G: []int64{2, 0},
	})
	Expect(err).NotTo(HaveOccurred())
	return m
}

func alloc(m *numa.Memory, node int, size, page int64, contig bool) (*hw.Region, error) {
	return m.Alloc(hw.AllocRequest{Node: node, Size: size, PageSize: page, Contiguous: contig, Owner: "test"})
}

var _ = Describe("hugepage memory", func() {
	var m *numa.Memory
	BeforeEach(func() { m = smallMemory() })

	It("implements hw.HugeMemory and knows the CPUs' nodes", func() {
		var hm hw.HugeMemory = m
		Expect(hm.NodeOf(0)).To(Equal(0))
		Expect(hm.NodeOf(24)).To(Equal(1))
		Expect(hm.NodeOf(99)).To(Equal(-1))
	})

	It("takes the preset's own reservation without a config", func() {
		m, err := numa.NewMemory(mustPreset("kunpeng920-4826-2p"), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Stats().Nodes).To(HaveLen(4))
		Expect(m.Stats().Nodes[3].Pages2M.TotalPages).To(Equal(int64(2048)))
	})

	It("rounds up to whole pages and places regions on the node asked", func() {
		r, err := alloc(m, 1, 3*numa.MiB, hw.Hugepage2M, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Node).To(Equal(1))
		Expect(r.Pages).To(Equal(int64(2)))
		Expect(r.Contiguous).To(BeFalse())
		s, _ := m.NodeStats(1)
		Expect(s.Pages2M.InUsePages).To(Equal(int64(2)))
		Expect(s.Pages2M.InUseBytes).To(Equal(3 * numa.MiB))
		Expect(s.Pages2M.FreePages).To(Equal(int64(1022)))
		s0, _ := m.NodeStats(0)
		Expect(s0.Pages2M.InUsePages).To(BeZero())
	})

	It("gives deterministic, distinct IOVAs", func() {
		a, _ := alloc(m, 0, numa.MiB, 0, true)
		b, _ := alloc(m, 0, numa.MiB, 0, true)
		c, _ := alloc(m, 1, numa.MiB, 0, true)
		g, _ := alloc(m, 0, numa.GiB, hw.Hugepage1G, true)
		Expect(b.IOVA - a.IOVA).To(Equal(uint64(hw.Hugepage2M)))
		Expect(c.IOVA).NotTo(Equal(a.IOVA))
		Expect(g.IOVA).NotTo(Equal(a.IOVA))
		Expect(g.IOVA % uint64(hw.Hugepage1G)).To(BeZero())
		again := smallMemory()
		a2, _ := alloc(again, 0, numa.MiB, 0, true)
		Expect(a2.IOVA).To(Equal(a.IOVA))
		// A freed page is handed out again first.
		Expect(m.Free(a)).To(Succeed())
		a3, _ := alloc(m, 0, numa.MiB, 0, true)
		Expect(a3.IOVA).To(Equal(a.IOVA))
	})

	It("says what was free when a node runs out, and counts the failure", func() {
		_, err := alloc(m, 1, 2044*numa.MiB, hw.Hugepage2M, false)
		Expect(err).NotTo(HaveOccurred())
		_, err = alloc(m, 1, 6*numa.MiB, hw.Hugepage2M, false)
		Expect(err).To(MatchError(hw.ErrNoHugepages))
		Expect(err).To(MatchError("node 1: 6 MiB asked in 2 MiB pages, 4 MiB free of 2048 MiB: hugepages exhausted"))
		s, _ := m.NodeStats(1)
		Expect(s.Pages2M.Failed).To(Equal(int64(1)))
		Expect(s.Pages2M.FreePages).To(Equal(int64(2)), "a failed request takes nothing")
		_, err = alloc(m, 1, numa.GiB, hw.Hugepage1G, true)
		Expect(err).To(MatchError("node 1: 1 GiB asked in 1 GiB pages, 0 MiB free of 0 MiB: hugepages exhausted"))
	})

	It("refuses contiguous memory larger than one page, and allows it within one", func() {
		_, err := alloc(m, 0, 4*numa.MiB, hw.Hugepage2M, true)
		Expect(errors.Is(err, hw.ErrNotContiguous)).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("node 0: 4 MiB asked contiguous in 2 MiB pages")))
		s, _ := m.NodeStats(0)
		Expect(s.Pages2M.RefusedContiguous).To(Equal(int64(1)))
		Expect(s.Pages2M.InUsePages).To(BeZero())

		r, err := alloc(m, 0, 2*numa.MiB, hw.Hugepage2M, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Contiguous).To(BeTrue())
		r, err = alloc(m, 0, 4*numa.MiB, hw.Hugepage1G, true)
		Expect(err).NotTo(HaveOccurred(), "4 MiB fits in one 1 GiB page")
		Expect(r.Contiguous).To(BeTrue())
	})

	It("refuses double frees and foreign regions, and counts them", func() {
		r, _ := alloc(m, 0, numa.MiB, 0, false)
		cp := *r
		Expect(m.Free(r)).To(Succeed())
		Expect(m.Free(r)).To(MatchError(numa.ErrDoubleFree))
		Expect(m.Free(&cp)).To(MatchError(numa.ErrForeignRegion))
		other := smallMemory()
		o, _ := alloc(other, 0, numa.MiB, 0, false)
		Expect(m.Free(o)).To(MatchError(numa.ErrForeignRegion))
		Expect(m.Free(nil)).To(MatchError(numa.ErrForeignRegion))
		Expect(m.Free(&hw.Region{Handle: 12345})).To(MatchError(numa.ErrForeignRegion))
		st := m.Stats()
		Expect(st.DoubleFrees).To(Equal(int64(1)))
		Expect(st.BadFrees).To(Equal(int64(4)))
		Expect(st.Nodes[0].Pages2M.Frees).To(Equal(int64(1)))
	})

	DescribeTable("refuses malformed requests",
		func(req hw.AllocRequest, want string) {
			_, err := m.Alloc(req)
			Expect(err).To(MatchError(numa.ErrBadRequest))
			Expect(err).To(MatchError(ContainSubstring(want)))
			Expect(m.Stats().BadRequests).To(Equal(int64(1)))
		},
		Entry("unknown node", hw.AllocRequest{Node: 5, Size: 1}, "node 5: no such node (nodes 0-1)"),
		Entry("zero size", hw.AllocRequest{Node: 0, Size: 0}, "size 0"),
		Entry("odd page size", hw.AllocRequest{Node: 0, Size: 1, PageSize: 4096}, "page size 4096"),
	)

	It("serves AnyNode from the first node with room", func() {
		r, err := alloc(m, numa.AnyNode, 2*numa.GiB, hw.Hugepage2M, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Node).To(Equal(0))
		r, err = alloc(m, numa.AnyNode, numa.GiB, hw.Hugepage2M, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Node).To(Equal(1))
		_, err = alloc(m, numa.AnyNode, 2*numa.GiB, hw.Hugepage2M, false)
		Expect(err).To(MatchError(hw.ErrNoHugepages))
		Expect(err).To(MatchError(ContainSubstring("any node: no node can serve it")))
	})

	It("returns in-use to zero when everything is freed, and keeps the peak", func() {
		var regions []*hw.Region
		for i := range 60 {
			r, err := alloc(m, i%2, int64(i+1)*numa.MiB, hw.Hugepage2M, false)
			Expect(err).NotTo(HaveOccurred())
			regions = append(regions, r)
		}
		g, err := alloc(m, 0, numa.GiB, hw.Hugepage1G, true)
		Expect(err).NotTo(HaveOccurred())
		regions = append(regions, g)
		Expect(m.Live()).To(HaveLen(61))
		Expect(m.ByOwner()).To(Equal([]numa.OwnerUsage{{Owner: "test", Regions: 61, Bytes: 1830*numa.MiB + numa.GiB, Pages: 930 + 1}}))
		for i := len(regions) - 1; i >= 0; i -= 2 {
			Expect(m.Free(regions[i])).To(Succeed())
		}
		for i := len(regions) - 2; i >= 0; i -= 2 {
			Expect(m.Free(regions[i])).To(Succeed())
		}
		for _, n := range m.Stats().Nodes {
			for _, p := range []numa.PoolStats{n.Pages2M, n.Pages1G} {
				Expect(p.InUsePages).To(BeZero())
				Expect(p.InUseBytes).To(BeZero())
				Expect(p.LiveRegions).To(BeZero())
				Expect(p.FreePages).To(Equal(p.TotalPages))
				Expect(p.Allocs).To(Equal(p.Frees))
			}
		}
		Expect(m.Stats().Nodes[0].Pages2M.PeakInUsePages).To(Equal(int64(465)))
		Expect(m.Live()).To(BeEmpty())
	})

	It("rejects a config that does not fit the machine, naming the key", func() {
		t := mustPreset("xeon-e5-2650v2-2p")
		_, err := numa.NewMemory(t, &numa.HugepageConfig{Pages2M: []int64{1, 2, 3}})
		Expect(err).To(MatchError(ContainSubstring("hugepages.2MiB: 3 counts for 2 nodes")))
		_, err = numa.NewMemory(t, &numa.HugepageConfig{Pages1G: []int64{65}})
		Expect(err).To(MatchError(ContainSubstring("hugepages: node 0: 0 x 2 MiB + 65 x 1 GiB pages exceed the node's 64 GiB")))
		_, err = numa.NewMemory(t, &numa.HugepageConfig{Pages1G: []int64{-1}})
		Expect(err).To(MatchError(ContainSubstring("hugepages.1GiB[0]: -1 is negative")))
	})
})
