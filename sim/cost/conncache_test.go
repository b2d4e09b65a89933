package cost_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("the kernel path's per-connection working set", func() {
	cc := cost.ConnCache{Miss: hw.CostCacheMiss, ConnBytes: 2048, CacheBytes: 512 << 10}

	It("misses nothing while the connections' state fits the core's private cache", func() {
		Expect(cc.MissesPerSegment(0)).To(BeZero())
		Expect(cc.MissesPerSegment(256)).To(BeZero()) // 256 x 2 KiB = 512 KiB
	})

	It("misses the evicted share of a connection's lines beyond it: ceil(B/64) x (1 - C/(N x B))", func() {
		Expect(cc.Lines()).To(BeEquivalentTo(32))
		Expect(cc.MissesPerSegment(1024)).To(BeNumerically("~", 32*(1-0.25), 1e-9))
		Expect(cost.ConnCache{Miss: hw.CostCacheMiss, ConnBytes: 2049, CacheBytes: 1}.Lines()).To(BeEquivalentTo(33))
	})

	It("is off when the model has no working set", func() {
		Expect(cost.ConnCache{}.Enabled()).To(BeFalse())
		Expect(cost.ConnCache{}.MissesPerSegment(1000)).To(BeZero())
	})

	It("charges each kernel segment its misses, the fractions carried so that the count is exact and deterministic", func() {
		active := 1024
		under := &hw.CountingMeter{}
		k := cost.NewKernelPath(under, costops.KernelModelOps(), nil)
		k.SetConnCache(cc, func() int { return active })
		for range 10 {
			k.Charge(tcp.CostSegmentRx, 1)
		}
		k.Charge(tcp.CostSegmentTx, 6) // a write's six segments, charged at once
		Expect(under.Counts[hw.CostCacheMiss]).To(BeEquivalentTo(16 * 24))
		Expect(under.Counts[cost.KernelTCPRx]).To(BeEquivalentTo(10))
		active = 1000 // 32 x (1 - 524288/2048000) = 23.808 a segment
		k.Charge(tcp.CostSegmentRx, 100)
		Expect(under.Counts[hw.CostCacheMiss]).To(BeEquivalentTo(16*24 + 2380))
	})

	It("charges no miss for the stack's other work, nor without a working set", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelPath(under, costops.KernelModelOps(), nil)
		k.SetConnCache(cc, func() int { return 4096 })
		k.Charge(hw.CostNICRxPacket, 10)
		Expect(under.Counts[hw.CostCacheMiss]).To(BeZero())
		k.SetConnCache(cost.ConnCache{}, func() int { return 4096 })
		k.Charge(tcp.CostSegmentRx, 10)
		Expect(under.Counts[hw.CostCacheMiss]).To(BeZero())
	})

	It("reads the three entries from a cost model", func() {
		m := cost.For(costops.Table()).Default()
		c := m.ConnCache()
		Expect(c.Enabled()).To(BeTrue())
		Expect(c.Miss).To(Equal(hw.CostCacheMiss))
		Expect(c.CacheBytes).To(BeNumerically(">", 0))
		Expect(m.PS(hw.CostKernelConnBytes, 2.6)).To(BeZero(), "a size is never charged as time")
	})
})
