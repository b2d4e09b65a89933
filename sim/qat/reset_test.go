package qat_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/statstest"
	"github.com/savanna-sim/savanna/sim/qat"
)

// expectReset checks a reset by statstest's rule.
func expectReset(before, after any, gauges, peaks []string) {
	ExpectWithOffset(1, statstest.Problems(before, after, gauges, peaks)).To(BeEmpty())
}

var _ = Describe("ResetStats", func() {
	gauges := []string{
		"InstancesInUse", "InstancesFree",
		"Devices.Name", "Devices.Model", "Devices.Driver", "Devices.NUMANode", "Devices.VFs",
		"Devices.Instances", "Devices.InUse", "Devices.HeldByFault", "Devices.Free", "Devices.Down", "Devices.Hung",
		"Devices.InFlight",
		"Processes.PID", "Processes.Exited", "Processes.Instances", "Processes.Buffers", "Processes.BufferBytes", "Processes.Pages",
		"Nodes.Node", "Nodes.MaxHugePages", "Nodes.MaxHugePagesPerProcess", "Nodes.PagesInUse",
		"Nodes.Fragmentation", "Nodes.LastCompactedPages",
	}
	peaks := []string{"Devices.MaxInFlight", "Devices.QueuePairs.MaxInFlight", "Devices.Engines.MaxQueueWait", "Nodes.PeakPages"}

	It("zeroes the counters of the whole host, keeps what is held and restarts the peaks from it", func() {
		mem := newFakeHuge(100, 2)
		svc := newService(mem,
			qat.DeviceConfig{Name: "usdm", Model: "c62x", Instances: 2, Engines: 1, RingDepth: 4},
			qat.DeviceConfig{Name: "legacy", Model: "dh895xcc", Driver: qat.DriverLegacy, Instances: 1, NUMANode: 1})
		usdm := svc.Devices()[0]
		m := newPriceMeter()
		svc.BindProcess(1, m)
		src := corpus(8192, 3)
		op := func() *hw.CompOp { return compressOp(src, 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumCRC32) }

		// Warm-up. Process 1 holds an instance and a buffer, has run two
		// requests and leaves three in flight, hung; the ring peaked at 4.
		inst, err := svc.Attach(1, 0)
		Expect(err).NotTo(HaveOccurred())
		held, err := svc.AllocPinned(1, 4096, 0)
		Expect(err).NotTo(HaveOccurred())
		run(inst, op())
		run(inst, op())
		Expect(usdm.EnqueueBurst(0, []*hw.CompOp{op(), op(), op(), op(), op()})).To(Equal(4)) // one engine: they queue
		usdm.WaitCompletion(0, time.Second)
		Expect(usdm.DequeueBurst(0, make([]*hw.CompOp, 1))).To(Equal(1))
		Expect(usdm.InjectFault(qat.FaultHang, qat.FaultParams{})).To(Succeed())
		// Process 3 takes the other instance and two pages, gives one back.
		_, err = svc.Attach(3, 0)
		Expect(err).NotTo(HaveOccurred())
		a, _ := svc.AllocPinned(3, 1536<<10, 0)
		b, _ := svc.AllocPinned(3, 1536<<10, 0)
		Expect(svc.FreePinned(a)).To(Succeed())
		Expect(svc.FreePinned(b)).To(Succeed())
		// Process 2 uses the legacy device's kernel memory and exits with
		// a buffer leaked; process 4 finds no instance; a few mistakes.
		legacy, err := svc.Attach(2, 1)
		Expect(err).NotTo(HaveOccurred())
		k, err := svc.AllocPinned(2, 64<<10, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.FreePinned(k)).To(Succeed())
		_, _ = svc.AllocPinned(2, 64<<10, 1)
		_, err = svc.Attach(4, 0)
		Expect(err).To(MatchError(hw.ErrNoInstance))
		Expect(svc.Detach(4, legacy)).NotTo(Succeed())
		Expect(svc.FreePinned(nil)).NotTo(Succeed())
		_, err = svc.AllocPinned(4, 0, 0)
		Expect(err).To(HaveOccurred())
		Expect(usdm.EnqueueBurst(99, []*hw.CompOp{op()})).To(BeZero())
		svc.Exit(2)

		before := svc.Stats()
		// The warm-up must have moved what the reset is to clear, and left
		// peaks above their gauges, or the spec proves nothing.
		Expect(before.Attaches).To(BeEquivalentTo(3))
		Expect(before.Leaked.Buffers).To(BeEquivalentTo(1))
		Expect(before.Devices[0].Requests.Compress).To(BeEquivalentTo(6))
		Expect(before.Devices[0].InFlight).To(BeEquivalentTo(3))
		Expect(before.Devices[0].MaxInFlight).To(BeEquivalentTo(4))
		Expect(before.Devices[0].Hung).To(BeTrue())
		Expect(before.Devices[0].Engines[0].MaxQueueWait).To(BeNumerically(">", 0))
		Expect(before.Nodes[0].PagesInUse).To(Equal(2))
		Expect(before.Nodes[0].PeakPages).To(Equal(3))
		Expect(before.Nodes[1].KernelAllocs).To(BeEquivalentTo(2))
		Expect(before.Processes[1].Exited).To(BeTrue())
		Expect(usdm.Stats().EnqueuedCount).To(BeEquivalentTo(6))

		svc.ResetStats()
		after := svc.Stats()
		expectReset(before, after, gauges, peaks)
		for _, d := range after.Devices {
			Expect(d.MaxInFlight).To(Equal(d.InFlight), d.Name)
			// Each queue pair's peak is what it holds now, and they hold
			// the device's in-flight requests between them.
			sum := 0
			for _, q := range d.QueuePairs {
				sum += q.MaxInFlight
			}
			Expect(sum).To(BeEquivalentTo(d.InFlight), d.Name)
			for _, e := range d.Engines {
				Expect(e.MaxQueueWait).To(BeZero())
			}
		}
		Expect(after.Devices[0].QueuePairs[0].MaxInFlight).To(Equal(3))
		for _, n := range after.Nodes {
			Expect(n.PeakPages).To(Equal(n.PagesInUse))
		}
		Expect(usdm.Stats()).To(BeZero())
		Expect(svc.ProcessStats(1)).To(Equal(after.Processes[0]))
		Expect(svc.ProcessStats(1).Buffers).To(BeEquivalentTo(1))

		// The measured window counts only its own work: the hung requests
		// fail when the hang clears, are dequeued, and one more runs.
		Expect(usdm.Clear(qat.FaultHang)).To(Succeed())
		out := make([]*hw.CompOp, 4)
		Expect(usdm.DequeueBurst(0, out)).To(Equal(3))
		Expect(out[0].Status).To(Equal(hw.StatusError))
		Expect(run(inst, op()).Status).To(Equal(hw.StatusSuccess))
		Expect(svc.FreePinned(held)).To(Succeed())
		st := svc.Stats()
		d := st.Devices[0]
		Expect(d.Requests.Compress).To(BeEquivalentTo(1))
		Expect(d.Errors.Hang).To(BeEquivalentTo(3))
		Expect(d.InFlight).To(BeZero())
		Expect(d.MaxInFlight).To(BeEquivalentTo(3))
		Expect(d.QueuePairs[0].Enqueued).To(BeEquivalentTo(1))
		Expect(d.QueuePairs[0].Dequeued).To(BeEquivalentTo(4))
		Expect(d.Engines[0].Requests).To(BeEquivalentTo(1))
		Expect(d.Attaches).To(BeZero())
		Expect(usdm.Stats().EnqueuedCount).To(BeEquivalentTo(1))
		Expect(usdm.Stats().DequeuedCount).To(BeEquivalentTo(4))
		Expect(st.Processes[0].Requests).To(BeEquivalentTo(1))
		Expect(st.Processes[0].Buffers).To(BeZero())
		Expect(st.PinnedFrees).To(BeEquivalentTo(1))
		Expect(st.PinnedAllocs).To(BeZero())
		Expect(st.Nodes[0].PageAllocs).To(BeZero())
	})
})
