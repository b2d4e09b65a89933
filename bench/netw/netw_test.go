package netw_test

import (
	"bytes"
	"context"
	"io"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
)

var _ = DescribeTable("a network carries bytes both ways",
	func(name string, mtu int, port uint16) {
		n, err := netw.New(netw.Config{Name: name, MTU: mtu})
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		Expect(n.Name()).To(Equal(name))
		Expect(n.MTU()).To(BeNumerically(">", 0))
		ln, err := n.Listen(port)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		go func() {
			defer GinkgoRecover()
			c, err := ln.Accept()
			Expect(err).NotTo(HaveOccurred())
			defer c.Close()
			_, _ = io.Copy(c, c)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := n.Dial(ctx, port)
		Expect(err).NotTo(HaveOccurred())
		defer c.Close()
		msg := bytes.Repeat([]byte("savanna "), 40_000) // several segments at any MTU
		go func() {
			defer GinkgoRecover()
			_, err := c.Write(msg)
			Expect(err).NotTo(HaveOccurred())
		}()
		got := make([]byte, len(msg))
		_, err = io.ReadFull(c, got)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(msg))
		d := n.Drops()
		if name != "kernel" {
			Expect(d.Link).To(BeZero(), d.String())
		}
	},
	Entry(nil, "savanna", 1500, uint16(7001)),
	Entry(nil, "savanna", 9000, uint16(7002)),
	Entry(nil, "gvisor", 1500, uint16(7003)),
	Entry(nil, "gvisor", 9000, uint16(7004)),
	Entry(nil, "kernel", 0, uint16(7005)),
)

var _ = Describe("New", func() {
	It("refuses an unknown network and a bad MTU by name", func() {
		_, err := netw.New(netw.Config{Name: "nope"})
		Expect(err).To(MatchError(ContainSubstring(`"nope"`)))
		_, err = netw.New(netw.Config{Name: "savanna", MTU: 20})
		Expect(err).To(MatchError(ContainSubstring("mtu 20")))
	})
})

var _ = Describe("Drops", func() {
	It("subtracts an earlier reading counter by counter", func() {
		a := netw.Drops{Link: 5, Stack: 3, Retransmits: 2, Detail: []netw.Counter{{Name: "x", Value: 4}, {Name: "y", Value: 1}}}
		b := netw.Drops{Link: 1, Stack: 3, Retransmits: 0, Detail: []netw.Counter{{Name: "x", Value: 4}}}
		d := a.Sub(b)
		Expect(d.Link).To(Equal(uint64(4)))
		Expect(d.Stack).To(BeZero())
		Expect(d.Retransmits).To(Equal(uint64(2)))
		Expect(d.Detail).To(Equal([]netw.Counter{{Name: "y", Value: 1}}))
	})
})
