package cost_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("cost models", func() {
	It("embeds a default that prices every operation with a source", func() {
		m := cost.Default()
		for op := hw.CostOp(0); int(op) < hw.NumCostOps; op++ {
			Expect(m.Entries[op].Source).NotTo(BeEmpty(), op.Name())
		}
	})

	It("converts cycles at the core's clock rate", func() {
		m := cost.Default()
		// nic_rx_packet is 30 cycles: 11.538 ns at 2.6 GHz, 10 ns at 3 GHz.
		Expect(m.PS(hw.CostNICRxPacket, 2.6)).To(Equal(int64(11538)))
		Expect(m.PS(hw.CostNICRxPacket, 3.0)).To(Equal(int64(10000)))
		Expect(m.Prices(3.0)[hw.CostSyscall]).To(Equal(int64(100_000)))
	})

	It("names file, line and key for an unknown key", func() {
		_, err := cost.Parse("x.yaml", []byte("version: 1\nname: x\ncosst: {}\n"))
		Expect(err).To(MatchError(ContainSubstring(`x.yaml:3:1: key "cosst": unknown key`)))
	})

	It("rejects an unknown operation, a bad unit and a missing source", func() {
		_, err := cost.Default().WithOverrides("s.yaml: hosts.a.cost", map[string]cost.Entry{"nic_rx_pkt": {Value: 1, Unit: "ns", Source: "x"}})
		Expect(err).To(MatchError(ContainSubstring(`costs.nic_rx_pkt": unknown operation`)))
		_, err = cost.Default().WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 1, Unit: "s", Source: "x"}})
		Expect(err).To(MatchError(ContainSubstring(`unit "s"`)))
		_, err = cost.Default().WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 1, Unit: "ns"}})
		Expect(err).To(MatchError(ContainSubstring("needs its source")))
	})

	It("requires a complete file", func() {
		_, err := cost.Parse("y.yaml", []byte("version: 1\nname: y\ncosts:\n  syscall: {value: 1, unit: ns, source: me}\n"))
		Expect(err).To(MatchError(ContainSubstring("no price for nic_rx_burst")))
	})

	It("applies overrides without touching the original", func() {
		base := cost.Default()
		m, err := base.WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 250, Unit: "ns", Source: "measured"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(m.PS(hw.CostSyscall, 1)).To(Equal(int64(250_000)))
		Expect(base.PS(hw.CostSyscall, 1)).To(Equal(int64(100_000)))
	})
})
