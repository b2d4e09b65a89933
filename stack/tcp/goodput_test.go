package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Goodput on a clean 25 Gb/s path", func() {
	DescribeTable("one connection fills at least 90% of the link",
		func(cc string, size int64) {
			cfg := tuned(func(c *Config) {
				c.CongestionControl = cc
				c.MTU = 1500
				c.SendBuffer = 4 << 20
				c.RecvBuffer = 4 << 20
			})
			w := newWire(wireConfig{rateBps: 25e9, latency: 10 * time.Microsecond, seed: 9}, [2]Config{cfg, cfg})
			res := w.transfer(size, 10*time.Second, 9)
			Expect(res.err).NotTo(HaveOccurred())
			Expect(res.done).To(BeTrue())
			Expect(res.recvHash).To(Equal(res.sentHash))
			// What the link can carry: MSS 1460 of every 1460+20+58
			// bytes on the wire (the TCP header, then frameOverhead: the
			// IPv4 header, Ethernet header, FCS, preamble, inter-frame
			// gap).
			capacity := 25e9 * 1460 / (1460 + HeaderLen + frameOverhead)
			goodput := float64(res.received*8) / res.elapsed.Seconds()
			GinkgoWriter.Printf("%s: %.2f Gb/s of %.2f Gb/s (%.1f%%), %v virtual, %d segments\n",
				cc, goodput/1e9, capacity/1e9, 100*goodput/capacity, res.elapsed, w.stacks[0].Stats().OutSegs)
			Expect(goodput).To(BeNumerically(">=", 0.9*capacity))
			Expect(w.stacks[0].Stats().RetransSegs).To(BeZero())
		},
		Entry("cubic, 64 MiB", CCCubic, int64(64<<20)),
		Entry("newreno, 64 MiB", CCNewReno, int64(64<<20)),
	)
})
