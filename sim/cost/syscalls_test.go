package cost_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("the kernel's view of socket calls", func() {
	It("prices an application's lstack socket calls as system calls", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelSyscalls(under)
		k.Charge(hw.CostStackSocketCall, 3)
		k.Charge(hw.CostRingOp, 7)
		k.Charge(hw.CostEpollWaitUser, 2)
		k.Charge(hw.CostCopyByte, 100)
		k.Charge(hw.CostSyscallFutex, 1)
		k.Charge(hw.CostSyscall, 1)   // a sleep in poll(2)
		k.Charge(hw.CostAppNanos, 50) // the application's own work
		Expect(under.Counts[hw.CostSyscall]).To(BeEquivalentTo(3 + 2 + 1))
		Expect(under.Counts[hw.CostEpollWaitKernel]).To(BeEquivalentTo(2))
		Expect(under.Counts[hw.CostKernelCopyByte]).To(BeEquivalentTo(100))
		Expect(under.Counts[hw.CostAppNanos]).To(BeEquivalentTo(50))
		for _, op := range []hw.CostOp{hw.CostStackSocketCall, hw.CostRingOp, hw.CostEpollWaitUser, hw.CostCopyByte, hw.CostSyscallFutex} {
			Expect(under.Counts[op]).To(BeZero(), op.Name())
		}
	})

	It("prices the stack thread's service of socket calls as nothing but the softirq's wake-up", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelPath(under, nil)
		k.Charge(hw.CostStackSocketCall, 2)
		k.Charge(hw.CostRingOp, 4)
		k.Charge(hw.CostSyscall, 1)
		k.Charge(hw.CostSyscallFutex, 1)
		k.Charge(hw.CostWakeup, 1)
		Expect(under.Counts[hw.CostWakeup]).To(BeEquivalentTo(1))
		var total int64
		for _, n := range under.Counts {
			total += n
		}
		Expect(total).To(BeEquivalentTo(1))
	})
})
