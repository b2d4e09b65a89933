package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("A lowered path MTU (RFC 8201 section 5.2, RFC 9293 section 3.7.1)", func() {
	It("lowers the send MSS of the connections to its destination only, and segments follow it", func() {
		cfg := DefaultConfig()
		w := newWire(wireConfig{rateBps: 1e9, latency: 20 * time.Microsecond, seed: 9}, [2]Config{cfg, cfg})
		l, err := w.stacks[1].Listen(IP{}, 80, 4)
		Expect(err).NotTo(HaveOccurred())
		cli, err := w.stacks[0].Connect(w.now, Addr{IP: w.addrs[0]}, Addr{IP: w.addrs[1], Port: 80})
		Expect(err).NotTo(HaveOccurred())
		limit := w.now + time.Second
		for !(cli.Connected() && l.Pending() == 1) {
			Expect(w.step(limit)).To(BeTrue())
		}
		before := cli.Info().MSS
		Expect(w.stacks[0].LowerPathMSS(IPFrom4([4]byte{10, 9, 9, 9}), 1000)).To(BeZero(), "another destination")
		Expect(w.stacks[0].LowerPathMSS(w.addrs[1], 1000)).To(Equal(1))
		Expect(cli.Info().MSS).To(Equal(1000-12), "less the timestamps option (RFC 6691)")
		Expect(cli.Info().MSS).To(BeNumerically("<", before))
		Expect(w.stacks[0].LowerPathMSS(w.addrs[1], 1400)).To(BeZero(), "never raised")

		w.maxSeg = 0
		Expect(cli.Write(pattern(20000))).To(Equal(20000))
		for w.step(w.now + time.Second) {
		}
		Expect(w.maxSeg).To(Equal(1000+HeaderLen), "every segment fits the lowered path")
	})
})
