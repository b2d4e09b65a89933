package numa_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/statstest"
	"github.com/savanna-sim/savanna/sim/numa"
)

var _ = Describe("ResetStats", func() {
	// The pool fields of both page sizes, by the rule of ResetStats.
	gauges := []string{"Nodes.Node"}
	for _, pool := range []string{"Pages2M", "Pages1G"} {
		for _, f := range []string{"PageSize", "TotalPages", "FreePages", "InUsePages", "InUseBytes", "LiveRegions"} {
			gauges = append(gauges, "Nodes."+pool+"."+f)
		}
	}
	peaks := []string{"Nodes.Pages2M.PeakInUsePages", "Nodes.Pages1G.PeakInUsePages"}

	It("zeroes the counters, keeps the pages held and restarts the peak from them", func() {
		m := smallMemory()
		// Warm-up: regions held on both nodes and page sizes, some freed
		// (so the peaks are above what is in use), and every failure.
		held := []*hw.Region{}
		for _, req := range []struct {
			node       int
			size, page int64
		}{{0, 5 * numa.MiB, hw.Hugepage2M}, {1, 3 * numa.MiB, hw.Hugepage2M}, {0, numa.GiB, hw.Hugepage1G}} {
			r, err := alloc(m, req.node, req.size, req.page, false)
			Expect(err).NotTo(HaveOccurred())
			held = append(held, r)
		}
		for range 3 {
			r, err := alloc(m, 0, 7*numa.MiB, hw.Hugepage2M, false)
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Free(r)).To(Succeed())
			Expect(m.Free(r)).To(MatchError(numa.ErrDoubleFree))
		}
		g, _ := alloc(m, 0, numa.GiB, hw.Hugepage1G, true)
		Expect(m.Free(g)).To(Succeed())
		_, err := alloc(m, 1, 4*numa.GiB, hw.Hugepage2M, false)
		Expect(err).To(MatchError(hw.ErrNoHugepages))
		_, err = alloc(m, 0, 4*numa.MiB, hw.Hugepage2M, true)
		Expect(err).To(MatchError(hw.ErrNotContiguous))
		_, err = m.Alloc(hw.AllocRequest{Node: 9, Size: 1})
		Expect(err).To(MatchError(numa.ErrBadRequest))
		Expect(m.Free(nil)).NotTo(Succeed())

		before := m.Stats()
		n0 := before.Nodes[0]
		Expect(n0.Pages2M.Allocs).To(BeEquivalentTo(4))
		Expect(n0.Pages2M.PeakInUsePages).To(BeNumerically(">", n0.Pages2M.InUsePages))
		Expect(n0.Pages1G.PeakInUsePages).To(BeNumerically(">", n0.Pages1G.InUsePages))
		Expect(before.Nodes[1].Pages2M.Failed).To(BeEquivalentTo(1))
		Expect(before.DoubleFrees).To(BeEquivalentTo(3))

		m.ResetStats()
		after := m.Stats()
		Expect(statstest.Problems(before, after, gauges, peaks)).To(BeEmpty())
		for _, n := range after.Nodes {
			Expect(n.Pages2M.PeakInUsePages).To(Equal(n.Pages2M.InUsePages))
			Expect(n.Pages1G.PeakInUsePages).To(Equal(n.Pages1G.InUsePages))
		}
		s1, _ := m.NodeStats(1)
		Expect(s1).To(Equal(after.Nodes[1]))
		Expect(m.Live()).To(HaveLen(3))

		// The measured window counts only its own work.
		r, err := alloc(m, 1, 2*numa.MiB, hw.Hugepage2M, false)
		Expect(err).NotTo(HaveOccurred())
		for _, h := range held {
			Expect(m.Free(h)).To(Succeed())
		}
		Expect(m.Free(held[0])).To(MatchError(numa.ErrDoubleFree))
		st := m.Stats()
		Expect(st.DoubleFrees).To(BeEquivalentTo(1))
		Expect(st.BadFrees).To(BeZero())
		Expect(st.Nodes[0].Pages2M.Allocs).To(BeZero())
		Expect(st.Nodes[0].Pages2M.Frees).To(BeEquivalentTo(1))
		Expect(st.Nodes[0].Pages2M.InUsePages).To(BeZero())
		Expect(st.Nodes[0].Pages2M.PeakInUsePages).To(Equal(n0.Pages2M.InUsePages))
		Expect(st.Nodes[1].Pages2M.Allocs).To(BeEquivalentTo(1))
		Expect(st.Nodes[1].Pages2M.InUsePages).To(Equal(r.Pages))
		Expect(st.Nodes[1].Pages2M.PeakInUsePages).To(Equal(before.Nodes[1].Pages2M.InUsePages + r.Pages))
		Expect(st.Nodes[1].Pages2M.Failed).To(BeZero())
	})
})
