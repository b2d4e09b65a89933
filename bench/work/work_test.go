package work_test

import (
	"context"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/bench/work"
)

// port hands each spec its own listening port, so that the kernel's
// TIME-WAIT entries of one spec never meet the next.
var nextPort atomic.Int32

func freshPort() uint16 { return uint16(31000 + nextPort.Add(1)*7) }

// Every workload, tiny, on every network at both address families:
// bytes intact and counts right. Timing is never asserted.
var _ = DescribeTable("a tiny workload",
	func(network string, mtu int, workload string, family int) {
		n, err := netw.New(netw.Config{Name: network, MTU: mtu, Family: family})
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		wl, err := work.ByName(workload)
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := work.Tiny()
		res, err := wl(ctx, n, p, freshPort())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Network).To(Equal(network))
		Expect(res.Workload).To(Equal(workload))
		Expect(res.Family).To(Equal(family))
		Expect(res.Metrics).NotTo(BeEmpty())
		for _, m := range res.Metrics {
			Expect(m.Value).To(BeNumerically(">=", 0), m.Name)
		}
		switch workload {
		case "bulk":
			Expect(res.Checked).To(Equal(p.BulkBytes))
		case "pingpong":
			Expect(res.Checked).To(Equal(int64(p.PingPongs)))
		case "setup":
			Expect(res.Checked).To(Equal(int64(p.Setups)))
		case "many":
			Expect(res.Checked).To(Equal(int64(p.ManyConns * p.ManyRounds)))
		}
		if network != "kernel" {
			// An in-process link loses nothing in so small a run.
			Expect(res.Drops.Link).To(BeZero(), res.Drops.String())
		}
	},
	Entry(nil, "savanna", 1500, "bulk", 4),
	Entry(nil, "savanna", 9000, "bulk", 4),
	Entry(nil, "savanna", 1500, "pingpong", 4),
	Entry(nil, "savanna", 1500, "setup", 4),
	Entry(nil, "savanna", 1500, "many", 4),
	Entry(nil, "gvisor", 1500, "bulk", 4),
	Entry(nil, "gvisor", 9000, "bulk", 4),
	Entry(nil, "gvisor", 1500, "pingpong", 4),
	Entry(nil, "gvisor", 1500, "setup", 4),
	Entry(nil, "gvisor", 1500, "many", 4),
	Entry(nil, "kernel", 0, "bulk", 4),
	Entry(nil, "kernel", 0, "pingpong", 4),
	Entry(nil, "kernel", 0, "setup", 4),
	Entry(nil, "kernel", 0, "many", 4),
	Entry(nil, "savanna", 1500, "bulk", 6),
	Entry(nil, "savanna", 9000, "bulk", 6),
	Entry(nil, "savanna", 1500, "pingpong", 6),
	Entry(nil, "savanna", 1500, "setup", 6),
	Entry(nil, "savanna", 1500, "many", 6),
	Entry(nil, "gvisor", 1500, "bulk", 6),
	Entry(nil, "gvisor", 9000, "bulk", 6),
	Entry(nil, "gvisor", 1500, "pingpong", 6),
	Entry(nil, "gvisor", 1500, "setup", 6),
	Entry(nil, "gvisor", 1500, "many", 6),
	Entry(nil, "kernel", 0, "bulk", 6),
	Entry(nil, "kernel", 0, "pingpong", 6),
	Entry(nil, "kernel", 0, "setup", 6),
	Entry(nil, "kernel", 0, "many", 6),
)

var _ = Describe("ByName", func() {
	It("knows every workload and refuses others by name", func() {
		for _, n := range work.Names() {
			_, err := work.ByName(n)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := work.ByName("nope")
		Expect(err).To(MatchError(ContainSubstring(`"nope"`)))
	})
})

var _ = Describe("Params", func() {
	It("has the issue's full sizes", func() {
		p := work.Full()
		Expect(p.BulkBytes).To(Equal(int64(256 << 20)))
		Expect(p.PingPongs).To(Equal(200_000))
		Expect(p.MsgSize).To(Equal(64))
		Expect(p.Setups).To(Equal(20_000))
		Expect(p.ManyConns).To(Equal(10_000))
		Expect(p.ManyRounds).To(Equal(10))
	})
})
