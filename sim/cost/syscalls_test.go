package cost_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/stack/lstack"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("the kernel's view of socket calls", func() {
	It("prices an application's lstack socket calls as system calls", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelSyscalls(under, costops.KernelModelOps())
		k.Charge(lstack.CostSocketCall, 3)
		k.Charge(lstack.CostRingOp, 7)
		k.Charge(lstack.CostEpollWait, 2)
		k.Charge(hw.CostCopyByte, 100)
		k.Charge(hw.CostSyscallFutex, 1)
		k.Charge(hw.CostSyscall, 1) // a sleep in poll(2)
		k.Charge(appcost.Nanos, 50) // the application's own work
		Expect(under.Counts[hw.CostSyscall]).To(BeEquivalentTo(3 + 2 + 1))
		Expect(under.Counts[cost.EpollWaitKernel]).To(BeEquivalentTo(2))
		Expect(under.Counts[cost.KernelCopyByte]).To(BeEquivalentTo(100))
		Expect(under.Counts[appcost.Nanos]).To(BeEquivalentTo(50))
		for _, op := range []hw.CostOp{lstack.CostSocketCall, lstack.CostRingOp, lstack.CostEpollWait, hw.CostCopyByte, hw.CostSyscallFutex} {
			Expect(under.Counts[op]).To(BeZero(), op.String())
		}
	})

	It("prices epoll_wait per call plus per ready event: lstack's per-event op becomes ep_send_events's", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelSyscalls(under, costops.KernelModelOps())
		k.Charge(lstack.CostEpollWait, 2)
		k.Charge(lstack.CostEpollEvent, 17) // two waits that returned 17 events
		Expect(under.Counts[hw.CostSyscall]).To(BeEquivalentTo(2))
		Expect(under.Counts[cost.EpollWaitKernel]).To(BeEquivalentTo(2))
		Expect(under.Counts[cost.EpollWaitEvent]).To(BeEquivalentTo(17))
		Expect(under.Counts[lstack.CostEpollEvent]).To(BeZero())
	})

	It("prices the stack thread's service of socket calls as nothing but the softirq's wake-up", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelPath(under, costops.KernelModelOps(), nil)
		k.Charge(lstack.CostSocketCall, 2)
		k.Charge(lstack.CostRingOp, 4)
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
