package qat_test

import (
	"encoding/json"
	"github.com/savanna-sim/savanna/internal/costops"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/sim/qat"
)

// gzipWorker is a Tengine-like worker on a simulated core: every period
// it serves one request whose body it compresses through QAT, staging it
// in a pinned buffer taken for the request and given back at its end (the
// zlib stream's deflateInit/deflateEnd).
type gzipWorker struct {
	svc    *qat.Service
	inst   hw.CompressInstance
	pid    hw.ProcessID
	body   []byte
	period time.Duration
	next   time.Duration
	served int
	failed int
}

func (w *gzipWorker) Poll(m hw.Meter) (bool, time.Duration) {
	if m.Now() < w.next {
		return false, w.next
	}
	w.next += w.period
	buf, err := w.svc.AllocPinned(w.pid, 384<<10, -1) // deflate state + in/out buffers
	if err != nil {
		w.failed++
		return true, w.next
	}
	src := buf.Bytes[:len(w.body)]
	copy(src, w.body)
	op := &hw.CompOp{Type: hw.OpStateless, Flush: hw.FlushFinal, Src: src, Dst: buf.Bytes[128<<10:],
		Xform: hw.Xform{Kind: hw.XformCompress, Algo: hw.AlgoDeflate, Level: 6, Checksum: hw.ChecksumCRC32}}
	dev := w.inst.Device()
	out := make([]*hw.CompOp, 1)
	if dev.EnqueueBurst(w.inst.QueuePair(), []*hw.CompOp{op}) == 1 {
		for dev.DequeueBurst(w.inst.QueuePair(), out) == 0 {
			dev.(hw.CompletionWaiter).WaitCompletion(w.inst.QueuePair(), time.Millisecond)
		}
		if out[0].Status == hw.StatusSuccess {
			w.served++
		}
	}
	_ = w.svc.FreePinned(buf)
	return true, w.next
}

// runWorker runs one worker at 1k QPS for d on a 2.6 GHz core priced by
// the default cost model and returns the core's statistics over the last
// half of the run.
func runWorker(driver qat.Driver, mode qat.CompletionMode, d time.Duration) (sim.CoreStats, *gzipWorker, *qat.Service) {
	eng := sim.NewEngine(1)
	svc, err := qat.NewService(qat.Config{Devices: []qat.DeviceConfig{{Model: "dh895xcc", Driver: driver, Completion: mode}}},
		qat.Options{Memory: newFakeHuge(64, 1), RNG: eng.RNG("qat/host"), Clock: eng.Now})
	Expect(err).NotTo(HaveOccurred())
	core := sim.NewCore(eng, 0, 0, cost.For(costops.Table()).Default().Prices(2.6), false)
	svc.BindProcess(1, core)
	inst, err := svc.Attach(1, 0)
	Expect(err).NotTo(HaveOccurred())
	w := &gzipWorker{svc: svc, inst: inst, pid: 1, body: corpus(16<<10, 1), period: time.Millisecond}
	core.Attach(w)
	eng.RunUntil(d / 2)
	core.ResetStats()
	eng.RunUntil(d)
	return core.Stats(), w, svc
}

var _ = Describe("the seed's stages on a simulated core at 1k QPS", func() {
	It("qat1.6-legacy saturates the core, over 90% in the kernel; oot40052 barely loads it", func() {
		window := 500 * time.Millisecond
		legacy, lw, lsvc := runWorker(qat.DriverLegacy, qat.Polling, 2*window)
		usdm, uw, _ := runWorker(qat.DriverOOT40052, qat.Polling, 2*window)
		lu, uu := legacy.Utilisation(window), usdm.Utilisation(window)
		kernelShare := float64(legacy.Kernel) / float64(legacy.User+legacy.Kernel)
		GinkgoWriter.Printf("legacy: utilisation %.2f, kernel share %.3f, served %d; oot40052: utilisation %.4f, served %d; fragmentation %.3f\n",
			lu, kernelShare, lw.served, uu, uw.served, lsvc.Fragmentation(0))
		Expect(lu).To(BeNumerically(">", 0.95))
		Expect(kernelShare).To(BeNumerically(">", 0.9))
		Expect(lw.served).To(BeNumerically("<", 500)) // it cannot keep up with 1k QPS
		Expect(uu).To(BeNumerically("<", 0.05))
		Expect(uw.served).To(BeNumerically(">=", 999))
		Expect(uw.failed + lw.failed).To(BeZero())
	})

	It("thread completion costs futex calls and context switches that polling does not", func() {
		polled, _, psvc := runWorker(qat.DriverOOT40052, qat.Polling, 200*time.Millisecond)
		threaded, _, tsvc := runWorker(qat.DriverOOT40052, qat.Thread, 200*time.Millisecond)
		Expect(psvc.Stats().Syscalls.Futex).To(BeZero())
		Expect(tsvc.Stats().Syscalls.Futex).To(BeNumerically(">=", 2*199))
		Expect(threaded.Ops[hw.CostContextSwitch]).To(BeNumerically(">", 0))
		Expect(threaded.Kernel).To(BeNumerically(">", polled.Kernel))
		Expect(polled.Ops[hw.CostQATPollIdle]).To(BeNumerically(">", 0))
	})
})

var _ = Describe("determinism and reports", func() {
	It("gives byte-identical statistics for the same run", func() {
		_, _, a := runWorker(qat.DriverOOT31092, qat.Thread, 50*time.Millisecond)
		_, _, b := runWorker(qat.DriverOOT31092, qat.Thread, 50*time.Millisecond)
		ja, err := json.Marshal(a.Stats())
		Expect(err).NotTo(HaveOccurred())
		jb, _ := json.Marshal(b.Stats())
		Expect(string(ja)).To(Equal(string(jb)))
		for _, key := range []string{`"instances_in_use"`, `"leaked"`, `"syscalls"`, `"ring_full"`, `"engines"`, `"queue_wait_ns"`, `"pages_in_use"`, `"fragmentation"`} {
			Expect(string(ja)).To(ContainSubstring(key))
		}
		Expect(a.Stats().Syscalls.Open).To(BeNumerically(">=", 2*50)) // oot31092: 2 per request
	})
})
