//go:build dpdk

package dpdk_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/dpdk"
)

var _ = Describe("Mempool", Label("dpdk"), func() {
	var pool *dpdk.Mempool
	made := 0

	BeforeEach(func() {
		var err error
		// Each spec takes a fresh pool under a fresh name (pool names are
		// unique in a process).
		made++
		pool, err = eal.NewMempool(dpdk.MempoolConfig{
			Name: fmt.Sprintf("mp_spec%d", made),
			Size: 64, DataRoom: 2048 + hw.DefaultHeadroom, Socket: dpdk.AnySocket,
		})
		Expect(err).NotTo(HaveOccurred())
	})

	It("hands out reset mbufs viewing the rte_mbuf's buffer", func() {
		m := pool.Get()
		Expect(m).NotTo(BeNil())
		Expect(m.RefCnt).To(BeEquivalentTo(1))
		Expect(m.DataOff).To(Equal(hw.DefaultHeadroom))
		Expect(m.Buf).To(HaveLen(2048 + hw.DefaultHeadroom))
		Expect(m.Handle).NotTo(BeZero())
		Expect(m.Pool).To(BeIdenticalTo(hw.Mempool(pool)))
		Expect(m.SetData([]byte("hello"))).To(Succeed())
		Expect(string(m.Data())).To(Equal("hello"))
		m.Free()
		Expect(pool.Stats().InUse).To(BeZero())
	})

	It("accounts for gets, puts and an empty pool", func() {
		Expect(pool.Stats()).To(Equal(hw.MempoolStats{Size: 64, Available: 64}))
		ms := make([]*hw.Mbuf, 64)
		for i := range ms {
			ms[i] = pool.Get()
			Expect(ms[i]).NotTo(BeNil())
		}
		Expect(pool.Get()).To(BeNil())
		Expect(pool.Stats()).To(Equal(hw.MempoolStats{Size: 64, Available: 0, InUse: 64, Gets: 64, FailedGets: 1}))
		seen := map[uintptr]bool{}
		for _, m := range ms {
			seen[m.Handle] = true
		}
		Expect(seen).To(HaveLen(64), "every twin is a different rte_mbuf")
		for _, m := range ms {
			m.Free()
		}
		Expect(pool.Stats()).To(Equal(hw.MempoolStats{Size: 64, Available: 64, InUse: 0, Gets: 64, FailedGets: 1}))
	})

	It("gets in bulk all or nothing", func() {
		ms := make([]*hw.Mbuf, 100)
		Expect(pool.GetBulk(ms[:40])).To(BeTrue())
		Expect(pool.Stats().InUse).To(Equal(40))
		Expect(pool.GetBulk(ms[40:])).To(BeFalse(), "60 more than the 24 left")
		Expect(pool.Stats().InUse).To(Equal(40))
		Expect(ms[40:]).To(HaveEach(BeNil()))
		for _, m := range ms[:40] {
			m.Free()
		}
		Expect(pool.Stats().Available).To(Equal(64))
	})

	It("returns an mbuf only when the last Go reference goes", func() {
		m := pool.Get()
		m.RefInc()
		m.Free()
		Expect(pool.Stats().InUse).To(Equal(1))
		m.Free()
		Expect(pool.Stats().InUse).To(BeZero())
	})

	It("frees chains segment by segment", func() {
		a, b := pool.Get(), pool.Get()
		a.Next, a.NbSegs = b, 2
		a.Free()
		Expect(pool.Stats().InUse).To(BeZero())
	})

	It("ignores an mbuf of another pool on Put and counts it", func() {
		pool.Put(&hw.Mbuf{})
		Expect(pool.DriverStats().ForeignPuts).To(BeEquivalentTo(1))
		Expect(pool.Stats().Available).To(Equal(64))
	})

	It("serves a registered lcore thread through its per-lcore cache", func() {
		cached, err := eal.NewMempool(dpdk.MempoolConfig{Name: "mp_cached", Size: 256, Cache: 32,
			DataRoom: 2048 + hw.DefaultHeadroom, Socket: dpdk.AnySocket})
		Expect(err).NotTo(HaveOccurred())
		done := make(chan hw.MempoolStats)
		go func() {
			defer GinkgoRecover()
			_, err := eal.RegisterThread()
			Expect(err).NotTo(HaveOccurred())
			defer eal.UnregisterThread()
			ms := make([]*hw.Mbuf, 100)
			Expect(cached.GetBulk(ms)).To(BeTrue())
			for _, m := range ms {
				m.Free()
			}
			Expect(cached.DriverStats().Cached).To(BeNumerically(">", 0), "freed mbufs park in this lcore's cache")
			done <- cached.Stats()
		}()
		st := <-done
		Expect(st.Gets).To(BeEquivalentTo(100))
		// Mbufs parked in the lcore's cache still count as available.
		Expect(st.Available).To(Equal(256))
		Expect(st.InUse).To(BeZero())
	})

	It("validates its configuration", func() {
		_, err := eal.NewMempool(dpdk.MempoolConfig{Name: "x", Size: 8, DataRoom: 70000})
		Expect(err).To(MatchError(ContainSubstring("data_room: 70000")))
	})
})
