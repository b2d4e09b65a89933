package ringdev_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/hw/ringdev"
)

var _ = Describe("rx copybreak", func() {
	var (
		a, b *ringdev.Port
		pool *ringdev.Mempool
	)
	BeforeEach(func() {
		var err error
		a, b, err = ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b", RxCopyBreak: 128})
		Expect(err).NotTo(HaveOccurred())
		pool, err = ringdev.NewMempool("p", 4096, 2048)
		Expect(err).NotTo(HaveOccurred())
		setup(a, pool, 1, 32, false)
		setup(b, pool, 1, 32, false)
	})

	It("delivers a short frame in a small mbuf and frees the sender's at once", func() {
		m := tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 1000, 80)
		want := m.Bytes(nil)
		m.Flags = hw.TxTCPChecksum
		m.L2Len, m.L3Len, m.L4Len = 14, 20, 20
		Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
		Expect(pool.Stats().InUse).To(BeZero(), "the sender's mbuf is back in its pool before the receiver polls")
		got := make([]*hw.Mbuf, 4)
		Expect(b.RxBurst(0, got)).To(Equal(1))
		c := got[0]
		Expect(c).NotTo(BeIdenticalTo(m))
		Expect(c.Pool).NotTo(Equal(hw.Mempool(pool)))
		Expect(c.Pool.DataRoom()).To(Equal(256), "headroom + 128, in cache lines")
		Expect(c.Bytes(nil)).To(Equal(want))
		Expect(c.Headroom()).To(Equal(hw.DefaultHeadroom))
		Expect(c.Flags).To(Equal(hw.TxTCPChecksum))
		Expect([3]uint16{c.L2Len, c.L3Len, c.L4Len}).To(Equal([3]uint16{14, 20, 20}))
		c.Free()
		Expect(c.Pool.Stats().InUse).To(BeZero())
		copies, fallbacks := b.CopyBreakStats()
		Expect(copies).To(BeEquivalentTo(1))
		Expect(fallbacks).To(BeZero())
		Expect(b.XStats()).To(ContainElement(hw.XStat{Name: "rx_copybreak_packets", Value: 1}))
		b.ResetStats()
		copies, _ = b.CopyBreakStats()
		Expect(copies).To(BeZero())
	})

	It("passes longer frames by pointer, and short ones too when the small pool is empty (counted)", func() {
		long := pool.Get()
		Expect(long.SetData(make([]byte, 129))).To(Succeed())
		Expect(a.TxBurst(0, []*hw.Mbuf{long})).To(Equal(1))
		got := make([]*hw.Mbuf, 32)
		Expect(b.RxBurst(0, got)).To(Equal(1))
		Expect(got[0]).To(BeIdenticalTo(long))
		got[0].Free()

		// The small pool has one mbuf per descriptor (32): hold them all.
		var held []*hw.Mbuf
		for i := 0; i < 32; i++ {
			Expect(a.TxBurst(0, []*hw.Mbuf{tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 1000, 80)})).To(Equal(1))
			n := b.RxBurst(0, got)
			held = append(held, got[:n]...)
		}
		m := tcpFrame(pool, [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 1000, 80)
		Expect(a.TxBurst(0, []*hw.Mbuf{m})).To(Equal(1))
		Expect(b.RxBurst(0, got)).To(Equal(1))
		Expect(got[0]).To(BeIdenticalTo(m), "no small mbuf left: by pointer")
		got[0].Free()
		for _, h := range held {
			h.Free()
		}
		copies, fallbacks := b.CopyBreakStats()
		Expect(copies).To(BeEquivalentTo(32))
		Expect(fallbacks).To(BeEquivalentTo(1))
		Expect(pool.Stats().InUse).To(BeZero())
	})

	It("refuses a copybreak beyond the largest", func() {
		_, _, err := ringdev.NewPair(ringdev.Config{}, ringdev.Config{RxCopyBreak: ringdev.MaxCopyBreak + 1})
		Expect(err).To(MatchError(ContainSubstring("rx_copybreak")))
	})
})
