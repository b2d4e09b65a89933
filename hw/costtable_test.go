package hw_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
)

var _ = Describe("the table of cost operations", func() {
	op := func(o hw.CostOp, key string) hw.CostOpInfo { return hw.CostOpInfo{Op: o, Key: key, Doc: "a unit"} }
	set := func(base hw.CostOp, ops ...hw.CostOpInfo) hw.CostOpSet { return hw.CostOpSet{Base: base, Ops: ops} }

	It("joins owners' sets and names their ops by key, in id order", func() {
		t, err := hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP+1, "b"), op(hw.OpsTCP, "a")), hw.MachineCostOps())
		Expect(err).NotTo(HaveOccurred())
		Expect(t.Len()).To(Equal(2 + len(hw.MachineCostOps().Ops)))
		Expect(t.Name(hw.OpsTCP)).To(Equal("a"))
		Expect(t.Name(hw.CostNICRxBurst)).To(Equal("nic_rx_burst"))
		Expect(t.Name(hw.OpsTCP + 2)).To(BeEmpty())
		Expect(t.Name(hw.CostOp(hw.NumCostOps))).To(BeEmpty())
		o, ok := t.Lookup("b")
		Expect(ok).To(BeTrue())
		Expect(o).To(Equal(hw.OpsTCP + 1))
		_, ok = t.Lookup("c")
		Expect(ok).To(BeFalse())
		ops := t.Ops()
		Expect(ops[0].Key).To(Equal("nic_rx_burst"))
		Expect(ops[len(ops)-1].Key).To(Equal("b"))
	})

	It("refuses an op at its range's base plus the capacity: the next owner's first id", func() {
		_, err := hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP, "a"), op(hw.OpsTCP+hw.OpsCap, "overflow")))
		rng := fmt.Sprintf("outside its range %d..%d", hw.OpsTCP, hw.OpsTCP+hw.OpsCap-1)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf(`tcp's op "overflow" is %d, %s`, hw.OpsTCP+hw.OpsCap, rng))))
		_, err = hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP-1, "under")))
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf(`tcp's op "under" is %d, %s`, hw.OpsTCP-1, rng))))
	})

	It("refuses overlapping owners, twice-used ids and keys, bad keys and missing docs", func() {
		_, err := hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP, "a")), set(hw.OpsTCP, op(hw.OpsTCP+1, "b")))
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("range tcp (%d..%d) declared by two owners", hw.OpsTCP, hw.OpsTCP+hw.OpsCap-1))))
		_, err = hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP, "a"), op(hw.OpsTCP, "b")))
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf(`tcp's op "b" is %d, which "a" already is`, hw.OpsTCP))))
		_, err = hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP, "a")), set(hw.OpsIface, op(hw.OpsIface, "a")))
		Expect(err).To(MatchError(ContainSubstring(`key "a" declared twice`)))
		_, err = hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP, "stack.tcp")))
		Expect(err).To(MatchError(ContainSubstring(`has key "stack.tcp"`)))
		_, err = hw.NewCostTable(set(hw.OpsTCP, hw.CostOpInfo{Op: hw.OpsTCP, Key: "a"}))
		Expect(err).To(MatchError(ContainSubstring(`op "a" has no doc`)))
		_, err = hw.NewCostTable(set(hw.OpsTCP+1, op(hw.OpsTCP+1, "a")))
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("base %d is not an owner range", hw.OpsTCP+1))))
		_, err = hw.NewCostTable(set(hw.CostOp(hw.NumCostOps), op(hw.CostOp(hw.NumCostOps), "a")))
		Expect(err).To(MatchError(ContainSubstring("is not an owner range")))
	})

	It("reports every problem at once", func() {
		_, err := hw.NewCostTable(set(hw.OpsTCP, op(hw.OpsTCP+hw.OpsCap, "x"), op(hw.OpsTCP, "")))
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf(`"x" is %d`, hw.OpsTCP+hw.OpsCap))))
		Expect(err).To(MatchError(ContainSubstring(`has key ""`)))
	})

	It("gives an op the CPU mode of its owner: the operating system's and Linux's model's are kernel time", func() {
		Expect(hw.CostSyscall.Mode()).To(Equal(hw.CPUKernel))
		Expect((hw.OpsKernel + 3).Mode()).To(Equal(hw.CPUKernel))
		Expect((hw.OpsKernel + hw.OpsCap).Mode()).To(Equal(hw.CPUUser))
		Expect(hw.CostCopyByte.Mode()).To(Equal(hw.CPUUser))
		Expect((hw.OpsHTTP).Mode()).To(Equal(hw.CPUUser))
		Expect(hw.CostOp(hw.NumCostOps + 20).Mode()).To(Equal(hw.CPUUser))
	})

	It("describes an op by its owner and index without a table", func() {
		Expect(hw.CostNICRxPacket.String()).To(Equal("machine+1"))
		Expect((hw.OpsTCP + 1).String()).To(Equal("tcp+1"))
		Expect(hw.CostOp(hw.NumCostOps).String()).To(Equal(fmt.Sprintf("op%d", hw.NumCostOps)))
	})
})
