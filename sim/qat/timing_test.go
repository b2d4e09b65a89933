package qat_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

var _ = Describe("service-time model", func() {
	It("uses the preset's figures: a request takes latency + bytes over one engine's share", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "dh895xcc"})
		d := svc.Devices()[0]
		m := d.Model()
		Expect(d.Engines()).To(Equal(6))
		perEngineGbps := m.CompressGbps.Value / m.Engines.Value // 4 Gb/s: 2 ns a byte
		want := m.Latency() + time.Duration(4096*8/perEngineGbps)
		Expect(d.ServiceTime(4096, false)).To(Equal(want))
		for _, mod := range qat.Models() {
			Expect(mod.CompressGbps.Source).NotTo(BeEmpty())
			Expect(mod.LatencyNanos.Source).NotTo(BeEmpty())
		}
	})

	It("completes a lone request after its service time, not before", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Engines: 2, CompressGbps: 16, Latency: 5 * time.Microsecond})
		m := &hw.CountingMeter{Clock: time.Millisecond}
		svc.BindProcess(1, m)
		inst, _ := svc.Attach(1, 0)
		dev := inst.Device()
		src := corpus(65536, 1)
		Expect(dev.EnqueueBurst(0, []*hw.CompOp{compressOp(src, 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)})).To(Equal(1))
		want := time.Millisecond + 5*time.Microsecond + 65536*time.Nanosecond // 8 Gb/s per engine = 1 ns/byte
		out := make([]*hw.CompOp, 1)
		m.Clock = want - 1
		Expect(dev.DequeueBurst(0, out)).To(Equal(0))
		m.Clock = want
		Expect(dev.DequeueBurst(0, out)).To(Equal(1))
	})

	It("queues requests for engines and gives the configured throughput", func() {
		const engines, gbps, n, size = 4, 32.0, 40, 65536
		lat := 3 * time.Microsecond
		svc := newService(nil, qat.DeviceConfig{Model: "4xxx", Engines: engines, CompressGbps: gbps, Latency: lat})
		m := &hw.CountingMeter{}
		svc.BindProcess(1, m)
		inst, _ := svc.Attach(1, 0)
		dev := inst.Device()
		src := corpus(size, 2)
		ops := make([]*hw.CompOp, n)
		for i := range ops {
			ops[i] = compressOp(src, 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)
		}
		Expect(dev.EnqueueBurst(0, ops)).To(Equal(n))
		// Each engine serves n/engines requests back to back.
		svcTime := lat + time.Duration(size*8*engines/gbps)
		last := time.Duration(n/engines) * svcTime
		out := make([]*hw.CompOp, n)
		m.Clock = last - 1
		got := dev.DequeueBurst(0, out)
		Expect(got).To(Equal(n - engines)) // the last round is not done
		m.Clock = last
		Expect(dev.DequeueBurst(0, out)).To(Equal(engines))
		throughput := float64(n*size*8) / last.Seconds() / 1e9
		want := gbps * float64(size*8) / (float64(size*8) + gbps/engines*float64(lat.Nanoseconds()))
		Expect(throughput).To(BeNumerically("~", want, 0.01))
		st := dev.(*qat.Device).DeviceStats()
		Expect(st.Engines).To(HaveLen(engines))
		for _, e := range st.Engines {
			Expect(e.Requests).To(BeEquivalentTo(n / engines))
			Expect(e.Busy).To(Equal(last))
			Expect(e.MaxQueueWait).To(Equal(last - svcTime))
		}
		Expect(st.MaxInFlight).To(BeEquivalentTo(n))
	})
})

var _ = Describe("completion modes", func() {
	setup := func(mode qat.CompletionMode) (*qat.Service, *priceMeter, hw.CompressInstance) {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Completion: mode, Latency: 20 * time.Microsecond})
		m := newPriceMeter()
		svc.BindProcess(1, m)
		inst, err := svc.Attach(1, 0)
		Expect(err).NotTo(HaveOccurred())
		m.CountingMeter = hw.CountingMeter{} // forget the attach
		return svc, m, inst
	}

	It("polling: the caller's core spends idle polls until the completion is due", func() {
		_, m, inst := setup(qat.Polling)
		dev := inst.Device()
		op := compressOp(corpus(1000, 1), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)
		Expect(dev.EnqueueBurst(0, []*hw.CompOp{op})).To(Equal(1))
		due := m.Clock - 200*time.Nanosecond + dev.(*qat.Device).ServiceTime(1000, false)
		out := make([]*hw.CompOp, 1)
		for dev.DequeueBurst(0, out) == 0 {
		}
		Expect(m.Clock).To(BeNumerically(">=", due))
		Expect(m.Clock).To(BeNumerically("<", due+200*time.Nanosecond))
		Expect(m.Counts[hw.CostQATSubmit]).To(BeEquivalentTo(1))
		Expect(m.Counts[hw.CostQATPoll]).To(BeEquivalentTo(1))
		Expect(m.Counts[hw.CostQATPollIdle]).To(BeNumerically("~", int64((due-200*time.Nanosecond)/(40*time.Nanosecond)), 2))
		Expect(m.Counts[hw.CostSyscallFutex]).To(BeZero())
		Expect(m.Idled).To(BeZero())
	})

	It("polling: WaitCompletion spins on the response ring", func() {
		_, m, inst := setup(qat.Polling)
		dev := inst.Device()
		Expect(dev.EnqueueBurst(0, []*hw.CompOp{compressOp(corpus(1000, 1), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)})).To(Equal(1))
		Expect(dev.(hw.CompletionWaiter).WaitCompletion(0, time.Second)).To(BeTrue())
		Expect(m.Counts[hw.CostQATPollIdle]).To(BeNumerically(">", 400))
		Expect(m.Idled).To(BeZero())
	})

	It("thread: WaitCompletion sleeps to the completion with a futex wait, a wake and a context switch", func() {
		svc, m, inst := setup(qat.Thread)
		dev := inst.Device()
		Expect(dev.EnqueueBurst(0, []*hw.CompOp{compressOp(corpus(1000, 1), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)})).To(Equal(1))
		due := dev.(*qat.Device).ServiceTime(1000, false)
		Expect(dev.(hw.CompletionWaiter).WaitCompletion(0, time.Second)).To(BeTrue())
		Expect(m.Counts[hw.CostSyscallFutex]).To(BeEquivalentTo(2))
		Expect(m.Counts[hw.CostContextSwitch]).To(BeEquivalentTo(1))
		Expect(m.Counts[hw.CostWakeup]).To(BeEquivalentTo(1))
		Expect(m.Counts[hw.CostQATPollIdle]).To(BeZero())
		Expect(m.Idled).To(BeNumerically(">", 0))
		Expect(m.Clock).To(BeNumerically(">=", due))
		out := make([]*hw.CompOp, 1)
		Expect(dev.DequeueBurst(0, out)).To(Equal(1))
		Expect(svc.ProcessStats(1).Syscalls.Futex).To(BeEquivalentTo(2))
		// Nothing in flight: it sleeps the whole timeout and says so.
		before := m.Clock
		Expect(dev.(hw.CompletionWaiter).WaitCompletion(0, time.Millisecond)).To(BeFalse())
		Expect(m.Clock - before).To(BeNumerically(">=", time.Millisecond))
		Expect(svc.Stats().Devices[0].WaitTimeouts).To(BeEquivalentTo(1))
	})

	It("lets a process override its device's mode", func() {
		svc, m, inst := setup(qat.Polling)
		Expect(svc.SetCompletionMode(1, qat.Thread)).To(Succeed())
		dev := inst.Device()
		Expect(dev.EnqueueBurst(0, []*hw.CompOp{compressOp([]byte("x"), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)})).To(Equal(1))
		dev.(hw.CompletionWaiter).WaitCompletion(0, time.Second)
		Expect(m.Counts[hw.CostSyscallFutex]).To(BeEquivalentTo(2))
		Expect(svc.SetCompletionMode(1, "interrupt")).To(MatchError(ContainSubstring("completion")))
	})
})

var _ = Describe("driver generations and their syscalls", func() {
	// perRequest runs requests of one op each and returns the syscalls a
	// request made.
	perRequest := func(driver qat.Driver, requests int) (qat.SyscallCounts, *priceMeter) {
		svc := newService(newFakeHuge(100, 1), qat.DeviceConfig{Model: "dh895xcc", Driver: driver})
		m := newPriceMeter()
		svc.BindProcess(1, m)
		inst, err := svc.Attach(1, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.ProcessStats(1).Syscalls).To(Equal(qat.SyscallCounts{Open: 1, Ioctl: 1, Mmap: 1}))
		for i := 0; i < requests; i++ {
			// A request: a stream in two ops.
			for _, flush := range []hw.FlushFlag{hw.FlushFull, hw.FlushFinal} {
				op := run(inst, compressOp(corpus(2000, 3), 1, hw.HuffmanDynamic, flush, hw.ChecksumCRC32))
				Expect(op.Status).To(Equal(hw.StatusSuccess))
			}
		}
		st := svc.ProcessStats(1).Syscalls
		st.Open--
		st.Ioctl--
		st.Mmap--
		return st, m
	}

	It("oot31092: open and ioctl in pairs, 4 per request", func() {
		sc, m := perRequest(qat.DriverOOT31092, 100)
		Expect(sc).To(Equal(qat.SyscallCounts{Open: 200, Ioctl: 200}))
		Expect(m.Counts[hw.CostSyscallOpen]).To(BeEquivalentTo(201))
	})

	It("oot40052: no per-request syscalls", func() {
		sc, _ := perRequest(qat.DriverOOT40052, 100)
		Expect(sc.Total()).To(BeZero())
	})

	It("thread mode adds a futex storm, two per completion waited for", func() {
		svc := newService(nil, qat.DeviceConfig{Model: "c62x", Completion: qat.Thread})
		m := newPriceMeter()
		svc.BindProcess(1, m)
		inst, _ := svc.Attach(1, 0)
		for i := 0; i < 50; i++ {
			run(inst, compressOp([]byte("hello"), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone))
		}
		Expect(svc.ProcessStats(1).Syscalls.Futex).To(BeEquivalentTo(100))
		Expect(svc.Stats().Devices[0].ContextSwitches).To(BeEquivalentTo(50))
	})
})
