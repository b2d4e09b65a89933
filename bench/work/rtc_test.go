package work_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/bench/work"
)

// The run-to-completion workloads, tiny, on savanna-rtc at both
// families: bytes intact and counts right. Timing is never asserted.
var _ = DescribeTable("a tiny run-to-completion workload",
	func(mtu int, workload string, family int) {
		n, err := netw.New(netw.Config{Name: "savanna-rtc", MTU: mtu, Family: family})
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		wl, err := work.For("savanna-rtc", workload)
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := work.Tiny()
		res, err := wl(ctx, n, p, freshPort())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Network).To(Equal("savanna-rtc"))
		Expect(res.Workload).To(Equal(workload))
		Expect(res.Family).To(Equal(family))
		// The same figures, by name, as the net.Conn workload's.
		ref := map[string][]string{"bulk": {"throughput", "cpu_per_gb", "mb_per_cpu_s"}, "pingpong": {"rate", "p50", "p99", "cpu_per_100k"}}[workload]
		var names []string
		for _, m := range res.Metrics {
			names = append(names, m.Name)
			Expect(m.Value).To(BeNumerically(">", 0), m.Name)
		}
		Expect(names).To(Equal(ref))
		switch workload {
		case "bulk":
			Expect(res.Checked).To(Equal(p.BulkBytes))
		case "pingpong":
			Expect(res.Checked).To(Equal(int64(p.PingPongs)))
		}
		Expect(res.Drops.Link).To(BeZero(), res.Drops.String())
	},
	Entry(nil, 1500, "bulk", 4),
	Entry(nil, 9000, "bulk", 4),
	Entry(nil, 1500, "pingpong", 4),
	Entry(nil, 1500, "bulk", 6),
	Entry(nil, 9000, "bulk", 6),
	Entry(nil, 1500, "pingpong", 6),
)

var _ = Describe("For", func() {
	It("gives savanna-rtc its run-to-completion workloads, refuses the others with the note, and passes other networks to ByName", func() {
		for _, w := range work.RTCWorkloads() {
			_, err := work.For("savanna-rtc", w)
			Expect(err).NotTo(HaveOccurred())
		}
		for _, w := range []string{"setup", "many"} {
			_, err := work.For("savanna-rtc", w)
			Expect(err).To(MatchError(ContainSubstring("setup and many are left to the net.Conn networks")))
		}
		_, err := work.For("savanna-rtc", "nope")
		Expect(err).To(MatchError(ContainSubstring(`"nope"`)))
		for _, w := range work.Names() {
			_, err := work.For("savanna", w)
			Expect(err).NotTo(HaveOccurred())
		}
	})

	It("keeps the two kinds apart: a net.Conn workload on savanna-rtc and a run-to-completion one elsewhere fail by name", func() {
		n, err := netw.New(netw.Config{Name: "savanna-rtc", MTU: 1500})
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err = work.PingPong(ctx, n, work.Tiny(), freshPort())
		Expect(err).To(MatchError(netw.ErrRunToCompletion))

		k, err := netw.New(netw.Config{Name: "kernel"})
		Expect(err).NotTo(HaveOccurred())
		defer k.Close()
		_, err = work.RTCBulk(ctx, k, work.Tiny(), freshPort())
		Expect(err).To(MatchError(ContainSubstring("needs the savanna-rtc network")))
	})
})
