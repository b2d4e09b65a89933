package cost_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/sim/cost"
)

var _ = Describe("cost models", func() {
	run := func() cost.Loader { return cost.For(costops.Table()) }

	It("embeds a default that prices every operation of the run's table with a source", func() {
		m := run().Default()
		for _, o := range costops.Table().Ops() {
			Expect(m.Entries[o.Op].Source).NotTo(BeEmpty(), o.Key)
		}
	})

	It("converts cycles at the core's clock rate", func() {
		m := run().Default()
		// nic_rx_packet is 30 cycles: 11.538 ns at 2.6 GHz, 10 ns at 3 GHz.
		Expect(m.PS(hw.CostNICRxPacket, 2.6)).To(Equal(int64(11538)))
		Expect(m.PS(hw.CostNICRxPacket, 3.0)).To(Equal(int64(10000)))
		Expect(m.Prices(3.0)[hw.CostSyscall]).To(Equal(int64(100_000)))
	})

	It("names file, line and key for an unknown key", func() {
		_, err := run().Parse("x.yaml", []byte("version: 1\nname: x\ncosst: {}\n"))
		Expect(err).To(MatchError(ContainSubstring(`x.yaml:3:1: key "cosst": unknown key`)))
	})

	It("rejects an unknown operation, a bad unit and a missing source", func() {
		_, err := run().Default().WithOverrides("s.yaml: hosts.a.cost", map[string]cost.Entry{"nic_rx_pkt": {Value: 1, Unit: "ns", Source: "x"}})
		Expect(err).To(MatchError(ContainSubstring(`costs.nic_rx_pkt": unknown operation`)))
		_, err = run().Default().WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 1, Unit: "s", Source: "x"}})
		Expect(err).To(MatchError(ContainSubstring(`unit "s"`)))
		_, err = run().Default().WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 1, Unit: "ns"}})
		Expect(err).To(MatchError(ContainSubstring("needs its source")))
	})

	It("names the first key the table does not know when the file prices an op no owner declares", func() {
		// A table of hw's owners only: every product and kernel-model key
		// of the default file is unknown to it.
		small, err := hw.NewCostTable(hw.MachineCostOps(), hw.OSCostOps())
		Expect(err).NotTo(HaveOccurred())
		_, err = cost.For(small).Parse("default.yaml", cost.DefaultBytes())
		Expect(err).To(MatchError(`default.yaml: key "costs.app_nanos": unknown operation; see docs/cost-model.md for the list`))
		_, err = cost.For(small).Parse("z.yaml", []byte("version: 1\nname: z\ncosts:\n  stack_tcp_rx: {value: 1, unit: ns, source: me}\n"))
		Expect(err).To(MatchError(ContainSubstring(`z.yaml: key "costs.stack_tcp_rx": unknown operation`)))
	})

	It("requires a complete file, naming what the table has and the file does not price", func() {
		_, err := run().Parse("y.yaml", []byte("version: 1\nname: y\ncosts:\n  syscall: {value: 1, unit: ns, source: me}\n"))
		Expect(err).To(MatchError(ContainSubstring("no price for nic_rx_burst")))
		Expect(err).To(MatchError(ContainSubstring("stack_tcp_rx")))
		Expect(err).NotTo(MatchError(ContainSubstring("syscall,")))
	})

	It("applies overrides without touching the original", func() {
		base := run().Default()
		m, err := base.WithOverrides("s", map[string]cost.Entry{"syscall": {Value: 250, Unit: "ns", Source: "measured"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(m.PS(hw.CostSyscall, 1)).To(Equal(int64(250_000)))
		Expect(base.PS(hw.CostSyscall, 1)).To(Equal(int64(100_000)))
	})

	It("prices nothing for an id no owner declares", func() {
		p := run().Default().Prices(2.6)
		t := costops.Table()
		for op := hw.CostOp(0); int(op) < hw.NumCostOps; op++ {
			if _, ok := t.Info(op); !ok {
				Expect(p[op]).To(BeZero(), op.String())
			}
		}
	})

	It("is handed the product's operations the kernel model re-prices (internal/costops.KernelModelOps)", func() {
		p := costops.KernelModelOps()
		t := costops.Table()
		for op, key := range map[hw.CostOp]string{
			p.FrameRx: "stack_eth_rx", p.IPRx: "stack_ip_rx", p.IPTx: "stack_ip_tx",
			p.TCPRx: "stack_tcp_rx", p.TCPTx: "stack_tcp_tx",
			p.SocketCall: "stack_socket_call", p.RingOp: "ring_op", p.EpollWaitUser: "epoll_wait_user",
			p.EpollEventUser: "epoll_event_user",
		} {
			Expect(t.Name(op)).To(Equal(key))
		}
	})
})
