package cost_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("the kernel path's payload copies", func() {
	It("charges none of the stack engines' copies: Linux's one copy of a segment's payload is the system call's", func() {
		under := &hw.CountingMeter{}
		k := cost.NewKernelPath(under, costops.KernelModelOps(), nil)
		k.Charge(hw.CostCopyByte, 1448) // send buffer into the frame, ring into TCP's buffer
		k.Charge(tcp.CostSegmentTx, 1)
		Expect(under.Counts[cost.KernelCopyByte]).To(BeZero())
		Expect(under.Counts[hw.CostCopyByte]).To(BeZero())
		Expect(under.Counts[cost.KernelTCPTx]).To(BeEquivalentTo(1))
	})

	It("leaves the system call's copy to the application's side, once per byte", func() {
		app := &hw.CountingMeter{}
		stackSide := &hw.CountingMeter{}
		// A 100-byte write: copy_from_user in the call, then the engines
		// copy the bytes into the send buffer and into the frame.
		cost.NewKernelSyscalls(app, costops.KernelModelOps()).Charge(hw.CostCopyByte, 100)
		kp := cost.NewKernelPath(stackSide, costops.KernelModelOps(), nil)
		kp.Charge(hw.CostCopyByte, 100)
		kp.Charge(hw.CostCopyByte, 100)
		Expect(app.Counts[cost.KernelCopyByte] + stackSide.Counts[cost.KernelCopyByte]).To(BeEquivalentTo(100))
	})
})
