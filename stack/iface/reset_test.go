package iface_test

import (
	"bytes"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/statstest"
	"github.com/savanna-sim/savanna/stack/iface"
)

// expectAllZero checks that every leaf is zero: the interface's stats
// and a socket's have counters only (no gauge, no peak).
func expectAllZero(v any) {
	ExpectWithOffset(1, statstest.Leaves(v)).NotTo(BeEmpty())
	ExpectWithOffset(1, statstest.Problems(v, v, nil, nil)).To(BeEmpty())
}

var _ = Describe("Interface.ResetStats", func() {
	var (
		a, b *node
		w    *wire
	)
	BeforeEach(func() {
		a, b = newNode(cfgA()), newNode(cfgB())
		w = &wire{a: a, b: b}
	})
	AfterEach(func() {
		a.ifc.Close()
		b.ifc.Close()
		w.pump(time.Hour)
		Expect(a.pool.Stats().InUse).To(BeZero())
		Expect(b.pool.Stats().InUse).To(BeZero())
	})

	It("zeroes every layer's counters and the sockets', and keeps neighbours, queues and reassembly", func() {
		srv, err := b.ifc.ListenUDP(7)
		Expect(err).NotTo(HaveOccurred())
		cli, err := a.ifc.ListenUDP(0)
		Expect(err).NotTo(HaveOccurred())
		to := iface.UDPAddr{IP: ipB, Port: 7}
		// Warm-up: ARP resolution, datagrams both ways (one left queued),
		// a ping, a datagram to a closed port, and the first fragment
		// of a datagram whose rest arrives in the measured window.
		Expect(cli.SendTo(0, []byte("one"), to)).To(Succeed())
		w.pump(0)
		Expect(srv.SendTo(0, []byte("back"), cli.LocalAddr())).To(Succeed())
		w.pump(0)
		Expect(a.ifc.SendEcho(0, ipB, 1, 1, []byte("ping"))).To(Succeed())
		w.pump(0)
		Expect(cli.SendTo(0, []byte("nobody"), iface.UDPAddr{IP: ipB, Port: 9})).To(Succeed())
		w.pump(0)
		big := bytes.Repeat([]byte("fragment "), 500)
		Expect(cli.SendTo(0, big, to)).To(Succeed())
		frags := a.link.take()
		Expect(len(frags)).To(BeNumerically(">", 1))
		b.deliver(0, frags[0])

		for _, n := range []*node{a, b} {
			st := n.ifc.Stats()
			Expect(st.ARP.TxRequests + st.ARP.TxReplies).To(BeNumerically(">", 0))
			Expect(st.Tx.Frames).To(BeNumerically(">", 0))
			Expect(st.ICMP.InMsgs).To(BeNumerically(">", 0))
		}
		Expect(b.ifc.Stats().UDP.NoPorts).To(BeEquivalentTo(1))
		Expect(b.ifc.Stats().IP.ReasmReqds).To(BeEquivalentTo(1))
		Expect(srv.Stats().Received).To(BeEquivalentTo(1))
		neighbours := a.ifc.ARP().Len()

		a.ifc.ResetStats()
		b.ifc.ResetStats()
		for _, n := range []*node{a, b} {
			expectAllZero(n.ifc.Stats())
		}
		expectAllZero(srv.Stats())
		expectAllZero(cli.Stats())
		Expect(a.ifc.ARP().Len()).To(Equal(neighbours))
		Expect(srv.Pending()).To(Equal(1))

		// The measured window counts only its own work: the queued
		// datagram read, the rest of the fragments reassembled, one more
		// datagram sent to a neighbour already resolved.
		buf := make([]byte, 8192)
		n, _, ok := srv.RecvFrom(buf)
		Expect(ok).To(BeTrue())
		Expect(string(buf[:n])).To(Equal("one"))
		for _, f := range frags[1:] {
			b.deliver(0, f)
		}
		n, _, ok = srv.RecvFrom(buf)
		Expect(ok).To(BeTrue())
		Expect(buf[:n]).To(Equal(big))
		Expect(cli.SendTo(0, []byte("two"), to)).To(Succeed())
		w.pump(0)

		as, bs := a.ifc.Stats(), b.ifc.Stats()
		Expect(as.UDP.OutDatagrams).To(BeEquivalentTo(1))
		Expect(as.Tx.Frames).To(BeEquivalentTo(1))
		Expect(as.IP.OutRequests).To(BeEquivalentTo(1))
		Expect(as.ARP).To(BeZero(), "the neighbour stayed resolved")
		Expect(bs.Eth.RxFrames).To(BeEquivalentTo(len(frags)))
		Expect(bs.IP.ReasmReqds).To(BeEquivalentTo(len(frags) - 1))
		Expect(bs.IP.ReasmOKs).To(BeEquivalentTo(1))
		Expect(bs.UDP.InDatagrams).To(BeEquivalentTo(2))
		Expect(bs.UDP.NoPorts).To(BeZero())
		Expect(bs.ICMP).To(BeZero())
		Expect(srv.Stats().Received).To(BeEquivalentTo(2))
		Expect(srv.Stats().Delivered).To(BeEquivalentTo(2)) // "one", queued before the reset, and the big one
		Expect(cli.Stats().Sent).To(BeEquivalentTo(1))
	})

	It("counts ARP work after a reset from zero", func() {
		a.ifc.Start(0)
		a.ifc.Poll(0)
		w.pump(0)
		Expect(a.ifc.Stats().ARP.TxGratuitous).To(BeNumerically(">", 0))
		a.ifc.ResetStats()
		Expect(a.ifc.Stats().ARP).To(BeZero())
		a.ifc.Announce(time.Second)
		w.pump(time.Second)
		Expect(a.ifc.Stats().ARP.TxGratuitous).To(BeEquivalentTo(1))
		Expect(a.ifc.ARP().Stats().TxGratuitous).To(BeNumerically(">", 1), "the cache's own counters run on")
	})
})
