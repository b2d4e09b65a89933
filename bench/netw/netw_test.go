package netw_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/bench/netw"
	"github.com/savanna-sim/savanna/stack/rt"
)

var _ = DescribeTable("a network carries bytes both ways",
	func(name string, mtu, family int, port uint16) {
		n, err := netw.New(netw.Config{Name: name, MTU: mtu, Family: family})
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		Expect(n.Name()).To(Equal(name))
		Expect(n.Family()).To(Equal(family))
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
		// The connection is of the family asked for, on both ends.
		for _, a := range []net.Addr{c.LocalAddr(), c.RemoteAddr()} {
			ta, ok := a.(*net.TCPAddr)
			Expect(ok).To(BeTrue(), "%T", a)
			Expect(ta.IP.To4() != nil).To(Equal(family == 4), ta.String())
		}
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
	Entry(nil, "savanna", 1500, 4, uint16(7001)),
	Entry(nil, "savanna", 9000, 4, uint16(7002)),
	Entry(nil, "gvisor", 1500, 4, uint16(7003)),
	Entry(nil, "gvisor", 9000, 4, uint16(7004)),
	Entry(nil, "kernel", 0, 4, uint16(7005)),
	Entry(nil, "savanna", 1500, 6, uint16(7011)),
	Entry(nil, "savanna", 9000, 6, uint16(7012)),
	Entry(nil, "gvisor", 1500, 6, uint16(7013)),
	Entry(nil, "gvisor", 9000, 6, uint16(7014)),
	Entry(nil, "kernel", 0, 6, uint16(7015)),
)

var _ = Describe("the savanna network at IPv6", func() {
	It("is ready when made: addresses past DAD, each side's neighbour resolved by ND before any workload", func() {
		n, err := netw.NewSavanna(1500, 6)
		Expect(err).NotTo(HaveOccurred())
		defer n.Close()
		c, s := n.Runtimes()
		for _, r := range []*rt.Runtime{c, s} {
			Expect(r.HasIPv6()).To(BeTrue())
			Expect(r.HasIPv4()).To(BeFalse(), "IPv6 only")
			for _, a := range r.Addrs6() {
				Expect(a.State).To(Equal("preferred"), a.Addr.String())
			}
			snap := r.Snapshot()
			Expect(snap.Lcores[0].Iface6).NotTo(BeNil())
			nd := snap.Lcores[0].Iface6.NDP
			// The client resolves the server (solicitation, advertisement);
			// the server learns the client from that solicitation (RFC
			// 4861 section 7.2.3) and TCP's ACKs confirm it.
			Expect(nd.NeighborsCreated).To(BeNumerically(">=", 1), "the warm-up connection made the peer's entry")
			Expect(nd.Confirmations).To(BeNumerically(">=", 1))
		}
		before := n.Drops()
		// A connection after New sends no neighbour solicitation.
		ln, err := n.Listen(7020)
		Expect(err).NotTo(HaveOccurred())
		defer ln.Close()
		go func() {
			defer GinkgoRecover()
			a, err := ln.Accept()
			if err == nil {
				a.Close()
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := n.Dial(ctx, 7020)
		Expect(err).NotTo(HaveOccurred())
		conn.Close()
		d := n.Drops().Sub(before)
		for _, ctr := range d.Counters {
			Expect(ctr.Name).NotTo(HaveSuffix(".ndp.tx_neighbor_solicits"))
		}
		Expect(d.Link+d.Stack).To(BeZero(), d.String())
	})
})

var _ = Describe("New", func() {
	It("refuses an unknown network and a bad MTU by name", func() {
		_, err := netw.New(netw.Config{Name: "nope"})
		Expect(err).To(MatchError(ContainSubstring(`"nope"`)))
		_, err = netw.New(netw.Config{Name: "savanna", MTU: 20})
		Expect(err).To(MatchError(ContainSubstring("mtu 20")))
		_, err = netw.New(netw.Config{Name: "savanna", Family: 5})
		Expect(err).To(MatchError(ContainSubstring("address family 5")))
		_, err = netw.New(netw.Config{Name: "gvisor", MTU: 1000, Family: 6})
		Expect(err).To(MatchError(ContainSubstring("below IPv6's minimum link MTU 1280")))
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
