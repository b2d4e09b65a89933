package nic_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/nic"
)

var _ = Describe("Mempool", func() {
	It("takes hugepages on its node and hands out reset mbufs", func() {
		mem := newTestMem(8, 2)
		p, err := nic.NewMempool("rx0", 1000, 2176, 1, mem)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Region().Node).To(Equal(1))
		Expect(p.Region().Pages).To(Equal(int64(2))) // 2,176,000 bytes of 2 MiB pages
		Expect(p.Region().Owner).To(Equal("rx0"))
		Expect(mem.freePages[1]).To(Equal(int64(6)))
		m := p.Get()
		Expect(m.RefCnt).To(Equal(int32(1)))
		Expect(m.Headroom()).To(Equal(hw.DefaultHeadroom))
		Expect(m.Tailroom()).To(Equal(2176 - hw.DefaultHeadroom))
		Expect(m.Pool).To(BeIdenticalTo(p))
		Expect(p.Stats()).To(Equal(hw.MempoolStats{Size: 1000, Available: 999, InUse: 1, Gets: 1}))
		m.Free()
		Expect(p.Stats().Available).To(Equal(1000))
		Expect(p.Free()).To(Succeed())
		Expect(mem.freePages[1]).To(Equal(int64(8)))
		Expect(p.Free()).To(MatchError(ContainSubstring("freed twice")))
	})

	It("fails with the allocator's error when the node is out of hugepages", func() {
		mem := newTestMem(1, 1)
		_, err := nic.NewMempool("big", 10000, 2176, 0, mem)
		Expect(err).To(MatchError(hw.ErrNoHugepages))
		Expect(err).To(MatchError(ContainSubstring(`mempool "big": 10000 mbufs of 2176 bytes on node 0`)))
	})

	It("empties, counts failed gets, and refuses bulk gets it cannot fill", func() {
		p, err := nic.NewMempool("small", 4, 256, 0, newTestMem(1, 1))
		Expect(err).NotTo(HaveOccurred())
		ms := make([]*hw.Mbuf, 5)
		Expect(p.GetBulk(ms)).To(BeFalse())
		Expect(p.GetBulk(ms[:4])).To(BeTrue())
		Expect(p.Get()).To(BeNil())
		Expect(p.Stats().FailedGets).To(Equal(uint64(2)))
		for _, m := range ms[:4] {
			m.Free()
		}
		Expect(p.Counters().Available).To(Equal(4))
	})

	It("survives double frees and foreign mbufs, counting them", func() {
		mem := newTestMem(4, 1)
		p, _ := nic.NewMempool("a", 4, 256, 0, mem)
		q, _ := nic.NewMempool("b", 4, 256, 0, mem)
		m := p.Get()
		m.Free()
		m.Free()
		p.Put(q.Get())
		p.Put(&hw.Mbuf{})
		p.Put(nil)
		c := p.Counters()
		Expect(c.DoublePuts).To(Equal(uint64(1)))
		Expect(c.ForeignPuts).To(Equal(uint64(3)))
		Expect(c.Available).To(Equal(4))
		// Still hands out four distinct mbufs.
		seen := map[*hw.Mbuf]bool{}
		for i := 0; i < 4; i++ {
			seen[p.Get()] = true
		}
		Expect(seen).To(HaveLen(4))
		Expect(p.Get()).To(BeNil())
		Expect(p.Free()).To(MatchError(ContainSubstring("4 of 4 mbufs still in use")))
	})

	It("gets and puts without allocating", func() {
		p, _ := nic.NewMempool("a", 64, 256, 0, newTestMem(1, 1))
		Expect(testing.AllocsPerRun(1000, func() { p.Get().Free() })).To(BeZero())
	})
})
