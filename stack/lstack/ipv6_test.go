package lstack_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/tcp"
)

var _ = Describe("two IPv6-only stacks across a simulated link", func() {
	It("resolve each other with Neighbor Discovery and move 8 MiB intact over TCP (RFC 8200, RFC 4861)", func() {
		eng := sim.NewEngine(5)
		c := newNode(eng, 0, "client", "fd00::2/64", cc("cubic"), 1500)
		s := newNode(eng, 1, "server", "fd00::1/64", cc("cubic"), 1500)
		_, err := nic.NewLink(eng, "wire", c.port, s.port, nic.LinkConfig{Latency: 10 * time.Microsecond})
		Expect(err).NotTo(HaveOccurred())
		srv, _ := ipv6.ParseAddr("fd00::1")
		cli, _ := ipv6.ParseAddr("fd00::2")
		p := &pair{eng: eng, client: c, server: s, v6: true, client6: cli, server6: srv}
		// DAD: the addresses are usable after a random delay up to 1 s
		// and one RetransTimer (RFC 4862 section 5.4).
		p.start = 3 * time.Second
		const size = 8 << 20
		snd, rcv := transfer(p, size, 20*time.Second)
		Expect(rcv.eof).To(BeTrue(), describe(snd, rcv))
		Expect(rcv.got).To(Equal(size))
		Expect(rcv.sum.Sum(nil)).To(Equal(snd.sum.Sum(nil)))
		st := c.in.Iface().Stats6()
		Expect(st.NDP.Resolved).To(BeNumerically(">=", 1))
		Expect(st.IPv6.OutFragReqds).To(BeZero()) // the MSS fits the link: 1500 - 40 - 20
		Expect(s.in.TCP().Config().MTU).To(Equal(1500))
		Expect(c.in.Iface().Stats().TCP.OutSegs).To(BeNumerically(">", size/1440))
		_ = tcp.IP{}
	})
})
