package qat_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

var _ = Describe("instances and processes", func() {
	It("gives 64 instances; the 65th attach fails with a clear error and a counter; freeing one lets the next succeed", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "dh895xcc", Driver: qat.DriverOOT31092}) // 64 by default
		var held []hw.CompressInstance
		for pid := 1; pid <= 64; pid++ {
			inst, err := svc.Attach(hw.ProcessID(pid), 0)
			Expect(err).NotTo(HaveOccurred())
			held = append(held, inst)
		}
		_, err := svc.Attach(65, 0)
		Expect(err).To(MatchError(hw.ErrNoInstance))
		Expect(err.Error()).To(ContainSubstring("all 64 instances held"))
		st := svc.Stats()
		Expect(st.AttachFailures.NoInstance).To(BeEquivalentTo(1))
		Expect(st.InstancesInUse).To(Equal(64))
		Expect(st.InstancesFree).To(Equal(0))
		Expect(st.Devices[0].AttachFailures).To(BeEquivalentTo(1))

		Expect(svc.Detach(7, held[6])).To(Succeed())
		inst, err := svc.Attach(65, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(inst.Name()).To(Equal("qat0/inst6"))
		Expect(svc.ProcessStats(65).Instances).To(Equal(1))
	})

	It("has 256 instances with the oot40052 driver: a reload that doubles 128 workers fits", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Driver: qat.DriverOOT40052})
		for pid := 1; pid <= 256; pid++ {
			_, err := svc.Attach(hw.ProcessID(pid), 0)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := svc.Attach(257, 0)
		Expect(errors.Is(err, hw.ErrNoInstance)).To(BeTrue())
	})

	It("returns instances when a process exits, and prefers the node asked for", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "4xxx", Instances: 2, NUMANode: 0},
			qat.DeviceConfig{Model: "4xxx", Instances: 2, NUMANode: 1, VFs: 2})
		a, err := svc.Attach(1, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.NUMANode()).To(Equal(1))
		Expect(a.Name()).To(Equal("qat1/vf0/inst0"))
		_, _ = svc.Attach(1, 1)
		c, err := svc.Attach(2, 1) // node 1 full: any node
		Expect(err).NotTo(HaveOccurred())
		Expect(c.NUMANode()).To(Equal(0))
		svc.Exit(1)
		st := svc.ProcessStats(1)
		Expect(st.Exited).To(BeTrue())
		Expect(st.InstancesAtExit).To(BeEquivalentTo(2))
		Expect(st.Leaked.Buffers).To(BeZero())
		Expect(svc.Stats().Devices[1].InUse).To(Equal(0))
	})

	It("refuses to detach an instance the process does not hold", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Instances: 4})
		inst, _ := svc.Attach(1, 0)
		Expect(svc.Detach(2, inst)).To(MatchError(ContainSubstring("not held")))
		Expect(svc.Stats().BadDetaches).To(BeEquivalentTo(1))
	})

	It("describes itself as a compressdev", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "dh895xcc", Instances: 8, VFs: 4, NUMANode: 1})
		inst, _ := svc.Attach(1, -1)
		caps := inst.Device().Capabilities()
		Expect(caps.DriverName).To(Equal("qat_dh895xccvf"))
		Expect(caps.MaxQueuePairs).To(Equal(8))
		Expect(caps.NUMANode).To(Equal(1))
		Expect(caps.Stateful && caps.FixedHuffman && caps.DynamicHuffman && caps.CRC32 && caps.Adler32).To(BeTrue())
		_, ok := inst.Device().(hw.CompletionWaiter)
		Expect(ok).To(BeTrue())
	})

	It("counts ops on queue pairs that no process holds", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Instances: 4})
		dev := svc.Devices()[0]
		Expect(dev.EnqueueBurst(3, []*hw.CompOp{{}})).To(Equal(0))
		Expect(dev.EnqueueBurst(99, []*hw.CompOp{{}})).To(Equal(0))
		st := dev.DeviceStats()
		Expect(st.UnattachedQueuePair).To(BeEquivalentTo(1))
		Expect(st.InvalidQueuePair).To(BeEquivalentTo(1))
		Expect(dev.Stats().EnqueueErrCount).To(BeEquivalentTo(2))
	})

	It("refuses ops when the ring is full, counted, and takes them after a dequeue", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Instances: 1, RingDepth: 4})
		inst, _ := svc.Attach(1, 0)
		dev := inst.Device()
		ops := make([]*hw.CompOp, 6)
		for i := range ops {
			ops[i] = compressOp([]byte("x"), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)
		}
		Expect(dev.EnqueueBurst(0, ops)).To(Equal(4))
		Expect(dev.Stats().EnqueueErrCount).To(BeEquivalentTo(2))
		Expect(svc.Stats().Devices[0].RingFull).To(BeEquivalentTo(2))
		out := make([]*hw.CompOp, 2)
		Expect(dev.DequeueBurst(0, out)).To(Equal(2))
		Expect(out[0]).To(BeIdenticalTo(ops[0]))
		Expect(dev.EnqueueBurst(0, ops[4:])).To(Equal(2))
	})
})

var _ = Describe("USDM memory", func() {
	It("carves buffers from the process's hugepages on the node and returns empty pages", func() {
		mem := newFakeHuge(100, 2)
		svc := newService(mem, qat.DeviceConfig{Model: "c62x", NUMANode: 1})
		a, err := svc.AllocPinned(1, 1<<20, 1)
		Expect(err).NotTo(HaveOccurred())
		b, err := svc.AllocPinned(1, 1<<20, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Node).To(Equal(1))
		Expect(a.Bytes).To(HaveLen(1 << 20))
		Expect(b.IOVA - a.IOVA).To(BeEquivalentTo(1 << 20))
		Expect(svc.PagesInUse(1)).To(Equal(1))
		Expect(mem.free[1]).To(BeEquivalentTo(99))
		c, err := svc.AllocPinned(1, 100, 1) // the first page is full
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.PagesInUse(1)).To(Equal(2))
		Expect(svc.FreePinned(a)).To(Succeed())
		Expect(svc.FreePinned(b)).To(Succeed())
		Expect(svc.PagesInUse(1)).To(Equal(2)) // the empty page is kept for reuse
		Expect(svc.FreePinned(c)).To(Succeed())
		Expect(svc.PagesInUse(1)).To(Equal(1)) // a second empty page goes back
		d, err := svc.AllocPinned(1, 2<<20, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.PagesInUse(1)).To(Equal(1))
		Expect(svc.FreePinned(d)).To(Succeed())
		svc.Exit(1)
		Expect(svc.ProcessStats(1).Leaked).To(Equal(qat.LeakCounts{}))
		Expect(svc.PagesInUse(1)).To(Equal(0))
		Expect(mem.free[1]).To(BeEquivalentTo(100))
		Expect(svc.FreePinned(d)).To(MatchError(ContainSubstring("already freed")))
		Expect(svc.Stats().BadFrees).To(BeEquivalentTo(1))
	})

	It("fails cleanly at max_huge_pages_per_process, at max_huge_pages, and when the host has no hugepages", func() {
		mem := newFakeHuge(5, 1)
		svc := newService(mem, qat.DeviceConfig{Model: "c62x", USDM: qat.USDMConfig{MaxHugePages: 4, MaxHugePagesPerProcess: 2}})
		for i := 0; i < 2; i++ {
			_, err := svc.AllocPinned(1, 2<<20, 0)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := svc.AllocPinned(1, 2<<20, 0)
		Expect(err).To(MatchError(hw.ErrNoPinnedMemory))
		Expect(err.Error()).To(ContainSubstring("max_huge_pages_per_process 2"))
		for i := 0; i < 2; i++ {
			_, err = svc.AllocPinned(2, 2<<20, 0)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err = svc.AllocPinned(3, 4096, 0)
		Expect(err).To(MatchError(hw.ErrNoPinnedMemory))
		Expect(err.Error()).To(ContainSubstring("max_huge_pages"))

		svc2 := newService(newFakeHuge(1, 1), qat.DeviceConfig{Model: "c62x"})
		_, err = svc2.AllocPinned(1, 2<<20, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = svc2.AllocPinned(1, 2<<20, 0)
		Expect(err).To(MatchError(hw.ErrNoPinnedMemory))
		Expect(err).To(MatchError(hw.ErrNoHugepages))

		_, err = svc2.AllocPinned(1, 3<<20, 0)
		Expect(err).To(MatchError(ContainSubstring("larger than one 2 MiB hugepage")))
		Expect(svc.NodeStats(0).AllocFailures).To(BeEquivalentTo(2))
		Expect(svc.ProcessStats(1).AllocFailures).To(BeEquivalentTo(1))
	})

	It("reports what a process held at exit as leaked, per process and node, and frees it", func() {
		mem := newFakeHuge(100, 2)
		svc := newService(mem, qat.DeviceConfig{Model: "c62x", NUMANode: 1})
		_, _ = svc.Attach(9, 1)
		for i := 0; i < 3; i++ {
			_, err := svc.AllocPinned(9, 1<<20, -1) // the instance's node
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(svc.ProcessStats(9).Pages).To(BeEquivalentTo(2))
		svc.Exit(9)
		st := svc.ProcessStats(9)
		Expect(st.Leaked).To(Equal(qat.LeakCounts{Buffers: 3, Bytes: 3 << 20, Pages: 2}))
		Expect(st.Pages).To(BeZero())
		Expect(svc.NodeStats(1).LeakedPages).To(BeEquivalentTo(2))
		Expect(svc.NodeStats(1).LeakedBuffers).To(BeEquivalentTo(3))
		Expect(svc.NodeStats(1).PagesInUse).To(BeZero())
		Expect(svc.Stats().Leaked.Buffers).To(BeEquivalentTo(3))
		Expect(mem.free[1]).To(BeEquivalentTo(100))
	})

	It("reproduces the seed's leak: streams never ended exhaust the per-process limit", func() {
		svc := newService(newFakeHuge(1000, 1), qat.DeviceConfig{Model: "c62x", USDM: qat.USDMConfig{MaxHugePagesPerProcess: 8}})
		var err error
		n := 0
		for ; err == nil && n < 10000; n++ {
			_, err = svc.AllocPinned(1, 256<<10, 0) // a stream's buffers, never freed (no deflateEnd)
		}
		Expect(err).To(MatchError(hw.ErrNoPinnedMemory))
		Expect(n - 1).To(Equal(8 * 8)) // 8 pages of 8 buffers of 256 KiB
	})
})
