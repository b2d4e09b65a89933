package qat_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

func smallOp() *hw.CompOp {
	return compressOp([]byte("hello hello hello"), 1, hw.HuffmanDynamic, hw.FlushFinal, hw.ChecksumNone)
}

var _ = Describe("faults", func() {
	var svc *qat.Service
	var dev *qat.Device
	var m *hw.CountingMeter
	BeforeEach(func() {
		svc = newService(newFakeHuge(100, 1), qat.DeviceConfig{Model: "c62x", Instances: 4})
		dev = svc.Devices()[0]
		m = &hw.CountingMeter{}
		svc.BindProcess(1, m)
	})

	It("instance exhaustion: attach fails with ErrNoInstance naming the fault until cleared", func() {
		Expect(dev.InjectFault(qat.FaultInstanceExhaustion, qat.FaultParams{Instances: 3})).To(Succeed())
		_, err := svc.Attach(1, 0)
		Expect(err).NotTo(HaveOccurred())
		_, err = svc.Attach(2, 0)
		Expect(err).To(MatchError(hw.ErrNoInstance))
		Expect(err.Error()).To(ContainSubstring("3 by an injected fault"))
		Expect(dev.DeviceStats().HeldByFault).To(Equal(3))
		Expect(dev.InjectFault(qat.FaultInstanceExhaustion, qat.FaultParams{})).To(Succeed()) // all
		Expect(dev.DeviceStats().Free).To(Equal(0))
		Expect(dev.Clear(qat.FaultInstanceExhaustion)).To(Succeed())
		_, err = svc.Attach(2, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(svc.Stats().AttachFailures.NoInstance).To(BeEquivalentTo(1))
	})

	It("USDM exhaustion: pinned allocation fails with ErrNoPinnedMemory until cleared", func() {
		Expect(dev.InjectFault(qat.FaultUSDMExhaustion, qat.FaultParams{})).To(Succeed())
		_, err := svc.AllocPinned(1, 4096, 0)
		Expect(err).To(MatchError(hw.ErrNoPinnedMemory))
		Expect(err.Error()).To(ContainSubstring("usdm_exhaustion"))
		Expect(svc.Stats().PinnedAllocFailures).To(BeEquivalentTo(1))
		Expect(dev.Clear(qat.FaultUSDMExhaustion)).To(Succeed())
		_, err = svc.AllocPinned(1, 4096, 0)
		Expect(err).NotTo(HaveOccurred())
	})

	It("engine errors: a seeded share of requests fails with StatusError, counted", func() {
		inst, _ := svc.Attach(1, 0)
		Expect(dev.InjectFault(qat.FaultEngineError, qat.FaultParams{Rate: 0.25})).To(Succeed())
		failed := 0
		for i := 0; i < 400; i++ {
			m.Clock += time.Millisecond
			op := run(inst, smallOp())
			if op.Status == hw.StatusError {
				Expect(op.Debug).To(ContainSubstring("engine error"))
				failed++
			}
		}
		Expect(failed).To(BeNumerically("~", 100, 30))
		Expect(dev.DeviceStats().Errors.Engine).To(BeEquivalentTo(failed))
		Expect(dev.Stats().DequeueErrCount).To(BeEquivalentTo(failed))
		Expect(dev.Clear(qat.FaultEngineError)).To(Succeed())
		Expect(run(inst, smallOp()).Status).To(Equal(hw.StatusSuccess))
	})

	It("hang: requests never complete while it lasts; clearing fails them", func() {
		inst, _ := svc.Attach(1, 0)
		w := hw.CompletionWaiter(dev)
		Expect(dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{smallOp()})).To(Equal(1))
		Expect(dev.InjectFault(qat.FaultHang, qat.FaultParams{})).To(Succeed())
		Expect(dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{smallOp()})).To(Equal(1))
		m.Clock = time.Hour
		out := make([]*hw.CompOp, 4)
		Expect(dev.DequeueBurst(inst.QueuePair(), out)).To(Equal(0))
		Expect(w.WaitCompletion(inst.QueuePair(), time.Millisecond)).To(BeFalse())
		Expect(dev.DeviceStats().HungRequests).To(BeEquivalentTo(2))
		Expect(dev.DeviceStats().Hung).To(BeTrue())
		Expect(dev.Clear(qat.FaultHang)).To(Succeed())
		Expect(dev.DequeueBurst(inst.QueuePair(), out)).To(Equal(2))
		Expect(out[0].Status).To(Equal(hw.StatusError))
		Expect(out[0].Debug).To(ContainSubstring("hang"))
		Expect(dev.DeviceStats().Errors.Hang).To(BeEquivalentTo(2))
		Expect(run(inst, smallOp()).Status).To(Equal(hw.StatusSuccess))
	})

	It("reset: in-flight requests fail, the device refuses work for the delay, then returns", func() {
		inst, _ := svc.Attach(1, 0)
		Expect(dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{smallOp(), smallOp()})).To(Equal(2))
		at := time.Nanosecond // before either completes
		Expect(dev.InjectFault(qat.FaultReset, qat.FaultParams{At: at, Delay: time.Millisecond})).To(Succeed())
		m.Clock = at
		out := make([]*hw.CompOp, 4)
		Expect(dev.DequeueBurst(inst.QueuePair(), out)).To(Equal(2))
		for _, op := range out[:2] {
			Expect(op.Status).To(Equal(hw.StatusError))
			Expect(op.Debug).To(Equal("device reset"))
		}
		Expect(dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{smallOp()})).To(Equal(0))
		svc.BindProcess(2, &hw.CountingMeter{Clock: 500 * time.Microsecond})
		_, err := svc.Attach(2, 0)
		Expect(err).To(MatchError(hw.ErrDeviceDown))
		st := dev.DeviceStats()
		Expect(st.Errors.Reset).To(BeEquivalentTo(2))
		Expect(st.EnqueueRefusedDown).To(BeEquivalentTo(1))
		Expect(st.Resets).To(BeEquivalentTo(1))
		Expect(svc.Stats().AttachFailures.DeviceDown).To(BeEquivalentTo(1))
		m.Clock = at + time.Millisecond
		Expect(run(inst, smallOp()).Status).To(Equal(hw.StatusSuccess))
	})

	It("heartbeat failure: in-flight requests fail and the device is down until cleared", func() {
		inst, _ := svc.Attach(1, 0)
		Expect(dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{smallOp()})).To(Equal(1))
		Expect(dev.InjectFault(qat.FaultHeartbeat, qat.FaultParams{})).To(Succeed())
		out := make([]*hw.CompOp, 1)
		Expect(dev.DequeueBurst(inst.QueuePair(), out)).To(Equal(1))
		Expect(out[0].Debug).To(ContainSubstring("heartbeat"))
		m.Clock = time.Hour
		Expect(dev.EnqueueBurst(inst.QueuePair(), []*hw.CompOp{smallOp()})).To(Equal(0))
		_, err := svc.Attach(3, 0)
		Expect(err).To(MatchError(hw.ErrDeviceDown))
		Expect(dev.DeviceStats().Down).To(BeTrue())
		Expect(dev.DeviceStats().Errors.Heartbeat).To(BeEquivalentTo(1))
		Expect(dev.Clear(qat.FaultHeartbeat)).To(Succeed())
		Expect(run(inst, smallOp()).Status).To(Equal(hw.StatusSuccess))
	})

	It("takes faults from the configuration, active from the start", func() {
		s := newService(nil, qat.DeviceConfig{Model: "4xxx", Instances: 2,
			Faults: []qat.FaultConfig{{Kind: qat.FaultInstanceExhaustion}}})
		_, err := s.Attach(1, 0)
		Expect(err).To(MatchError(hw.ErrNoInstance))
	})

	It("refuses unknown kinds", func() {
		Expect(dev.InjectFault("meltdown", qat.FaultParams{})).To(MatchError(ContainSubstring("meltdown")))
		Expect(dev.InjectFault(qat.FaultEngineError, qat.FaultParams{Rate: 2})).To(MatchError(ContainSubstring("rate")))
	})
})
