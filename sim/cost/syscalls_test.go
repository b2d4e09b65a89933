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

	It("prices an event loop's interest-list change as epoll_ctl(2): its entry and exit, and ep_insert's, ep_remove's or ep_modify's work", func() {
		// redis-benchmark's ae loop makes five a request (strace -c: 5.005
		// epoll_ctl calls a request at 50 clients; docs/cost-model.md).
		ctl := hw.OpsLstack + 4 // the product's epoll_ctl op (lstack.CostEpollCtl)
		p := costops.KernelModelOps()
		p.EpollCtl, p.HasEpollCtl = ctl, true
		under := &hw.CountingMeter{}
		k := cost.NewKernelSyscalls(under, p)
		k.Charge(ctl, 5)
		Expect(under.Counts[hw.CostSyscall]).To(BeEquivalentTo(5))
		Expect(under.Counts[cost.EpollCtlKernel]).To(BeEquivalentTo(5))
		Expect(under.Counts[ctl]).To(BeZero())
	})

	It("leaves op 0 (nic_rx_burst) alone when the product names no epoll_ctl op", func() {
		p := costops.KernelModelOps()
		p.EpollCtl, p.HasEpollCtl = 0, false
		under := &hw.CountingMeter{}
		cost.NewKernelSyscalls(under, p).Charge(hw.CostNICRxBurst, 2)
		Expect(under.Counts[hw.CostNICRxBurst]).To(BeEquivalentTo(2))
		Expect(under.Counts[cost.EpollCtlKernel]).To(BeZero())
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
