package lstack_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/tcp"
)

func cc(name string) tcp.Config {
	c := tcp.DefaultConfig()
	c.CongestionControl = name
	c.SendBuffer, c.RecvBuffer = 4<<20, 4<<20
	return c
}

var _ = Describe("two stacks across a simulated link", func() {
	const size = 64 << 20

	DescribeTable("move 64 MiB intact under hardship",
		func(congestion string, link nic.LinkConfig) {
			link.Latency = 10 * time.Microsecond
			p := newPair(11, link, cc(congestion), 1500)
			s, r := transfer(p, size, 60*time.Second)
			Expect(r.eof).To(BeTrue(), describe(s, r))
			Expect(r.got).To(Equal(size))
			Expect(r.sum.Sum(nil)).To(Equal(s.sum.Sum(nil)))
		},
		Entry("newreno, clean", "newreno", nic.LinkConfig{}),
		Entry("cubic, clean", "cubic", nic.LinkConfig{}),
		Entry("newreno, 1% loss", "newreno", nic.LinkConfig{Loss: 0.01}),
		Entry("cubic, 1% loss", "cubic", nic.LinkConfig{Loss: 0.01}),
		Entry("newreno, 5% loss", Label("slow"), "newreno", nic.LinkConfig{Loss: 0.05}),
		Entry("cubic, 5% loss", Label("slow"), "cubic", nic.LinkConfig{Loss: 0.05}),
		Entry("newreno, reordering", "newreno", nic.LinkConfig{Reorder: 0.02}),
		Entry("cubic, reordering", "cubic", nic.LinkConfig{Reorder: 0.02}),
		Entry("newreno, duplication", "newreno", nic.LinkConfig{Duplicate: 0.02}),
		Entry("cubic, duplication", "cubic", nic.LinkConfig{Duplicate: 0.02}),
		Entry("newreno, corruption", "newreno", nic.LinkConfig{Corrupt: 0.01}),
		Entry("cubic, corruption", "cubic", nic.LinkConfig{Corrupt: 0.01}),
		Entry("cubic, everything at once", Label("slow"), "cubic", nic.LinkConfig{Loss: 0.01, Reorder: 0.01, Duplicate: 0.01, Corrupt: 0.01, Jitter: 5 * time.Microsecond}),
	)
})

var _ = Describe("goodput", func() {
	It("fills at least 90% of a clean 25 Gb/s link after header overhead", func() {
		const size = 64 << 20
		p := newPair(3, nic.LinkConfig{Latency: 10 * time.Microsecond}, cc("cubic"), 1500)
		s, r := transfer(p, size, 10*time.Second)
		Expect(r.eof).To(BeTrue(), describe(s, r))
		Expect(r.sum.Sum(nil)).To(Equal(s.sum.Sum(nil)))
		// Each 1460-byte payload costs 1460 + 40 (TCP/IP) + 14 + 4 (Ethernet
		// header, FCS) + 20 (preamble, inter-frame gap) bytes on the wire.
		capacity := 25e9 * 1460 / 1538
		elapsed := r.at.Seconds()
		goodput := float64(size) * 8 / elapsed
		cs, ss := p.client.core.Stats(), p.server.core.Stats()
		GinkgoWriter.Printf("client busy %v server busy %v; client tcp %+v\nserver tcp %+v\nserver nic %+v\n", cs.User+cs.Kernel, ss.User+ss.Kernel, p.client.in.TCP().Stats(), p.server.in.TCP().Stats(), p.server.port.Stats())
		GinkgoWriter.Printf("goodput %.2f Gb/s of %.2f Gb/s (%.1f%%) in %v simulated\n", goodput/1e9, capacity/1e9, 100*goodput/capacity, r.at)
		Expect(goodput).To(BeNumerically(">=", 0.9*capacity))
	})
})
