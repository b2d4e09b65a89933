package arp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
)

var (
	macUs   = ether.Addr{0x02, 0, 0, 0, 0, 0x01}
	macPeer = ether.Addr{0x02, 0, 0, 0, 0, 0x02}
	macNew  = ether.Addr{0x02, 0, 0, 0, 0, 0x03}
	ipUs    = [4]byte{10, 0, 0, 1}
	ipPeer  = [4]byte{10, 0, 0, 2}
	ipOther = [4]byte{10, 0, 0, 3}
)

type sent struct {
	r   arp.Repr
	dst ether.Addr
	at  time.Duration
}

// recorder is a Sink that records what the cache asks for.
type recorder struct {
	arps    []sent
	pending []*hw.Mbuf
	macs    []ether.Addr
	dropped []*hw.Mbuf
}

func (r *recorder) SendARP(now time.Duration, p arp.Repr, dst ether.Addr) {
	r.arps = append(r.arps, sent{p, dst, now})
}
func (r *recorder) SendPending(now time.Duration, m *hw.Mbuf, mac ether.Addr) {
	r.pending = append(r.pending, m)
	r.macs = append(r.macs, mac)
}
func (r *recorder) DropPending(m *hw.Mbuf) { r.dropped = append(r.dropped, m) }

func newCache(cfg arp.Config) *arp.Cache {
	c, err := arp.NewCache(cfg, ipUs, macUs)
	Expect(err).NotTo(HaveOccurred())
	return c
}

var _ = Describe("Cache", func() {
	var (
		c   *arp.Cache
		rec *recorder
	)
	BeforeEach(func() {
		c = newCache(arp.Config{})
		rec = &recorder{}
	})

	It("queues while resolving, then sends what waited", func() {
		m1, m2 := &hw.Mbuf{}, &hw.Mbuf{}
		_, ok := c.Resolve(0, ipPeer, m1, rec)
		Expect(ok).To(BeFalse())
		_, ok = c.Resolve(time.Millisecond, ipPeer, m2, rec)
		Expect(ok).To(BeFalse())
		Expect(rec.arps).To(HaveLen(1), "one request per resolution")
		Expect(rec.arps[0].dst).To(Equal(ether.BroadcastAddr()))
		Expect(rec.arps[0].r).To(Equal(arp.Repr{Op: arp.OpRequest, SenderHW: macUs, SenderIP: ipUs, TargetIP: ipPeer}))
		Expect(c.Pending()).To(Equal(2))

		c.Input(2*time.Millisecond, arp.Repr{Op: arp.OpReply, SenderHW: macPeer, SenderIP: ipPeer, TargetHW: macUs, TargetIP: ipUs}, rec)
		Expect(rec.pending).To(Equal([]*hw.Mbuf{m1, m2}), "in order")
		Expect(rec.macs).To(ConsistOf(macPeer, macPeer))
		Expect(c.Pending()).To(Equal(0))
		mac, ok := c.Resolve(3*time.Millisecond, ipPeer, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue())
		Expect(mac).To(Equal(macPeer))
		st := c.Stats()
		Expect(st.Resolved).To(Equal(uint64(1)))
		Expect(st.PendingQueued).To(Equal(uint64(2)))
		Expect(st.PendingSent).To(Equal(uint64(2)))
	})

	It("retransmits, then gives up and drops the queue", func() {
		m := &hw.Mbuf{}
		c.Resolve(0, ipPeer, m, rec)
		next := c.Poll(0, rec)
		Expect(next).To(Equal(time.Second))
		Expect(c.Poll(999*time.Millisecond, rec)).To(Equal(time.Second))
		Expect(rec.arps).To(HaveLen(1))
		next = c.Poll(time.Second, rec)
		Expect(rec.arps).To(HaveLen(2))
		Expect(next).To(Equal(2 * time.Second))
		c.Poll(2*time.Second, rec)
		Expect(rec.arps).To(HaveLen(3))
		Expect(rec.dropped).To(BeEmpty())
		next = c.Poll(3*time.Second, rec)
		Expect(rec.arps).To(HaveLen(3), "MaxRequests is 3")
		Expect(rec.dropped).To(Equal([]*hw.Mbuf{m}))
		Expect(next).To(Equal(arp.Never))
		Expect(c.Len()).To(Equal(0))
		st := c.Stats()
		Expect(st.ResolveTimeouts).To(Equal(uint64(1)))
		Expect(st.PendingDropTimeout).To(Equal(uint64(1)))
		Expect(st.TxRequests).To(Equal(uint64(3)))
	})

	It("bounds the queue per destination and in total", func() {
		c = newCache(arp.Config{PendingPerDest: 2, PendingTotal: 3})
		for range 3 {
			c.Resolve(0, ipPeer, &hw.Mbuf{}, rec)
		}
		Expect(rec.dropped).To(HaveLen(1))
		Expect(c.Stats().PendingDropDestFull).To(Equal(uint64(1)))
		c.Resolve(0, ipOther, &hw.Mbuf{}, rec)
		c.Resolve(0, ipOther, &hw.Mbuf{}, rec)
		Expect(rec.dropped).To(HaveLen(2))
		Expect(c.Stats().PendingDropTotalFull).To(Equal(uint64(1)))
		Expect(c.Pending()).To(Equal(3))
	})

	It("bounds the queue per destination by bytes as Linux's unres_qlen_bytes does", func() {
		c = newCache(arp.Config{})
		// 128 SYNs of 74 bytes, as a load generator opening 128
		// connections at once queues: all fit in 212992 bytes.
		for range 128 {
			c.Resolve(0, ipPeer, &hw.Mbuf{PktLen: 74}, rec)
		}
		Expect(rec.dropped).To(BeEmpty())
		Expect(c.Pending()).To(Equal(128))
		// Full-size frames: 101 fit (Linux's derived unres_qlen), the
		// 102nd is dropped and counted.
		for range 102 {
			c.Resolve(0, ipOther, &hw.Mbuf{PktLen: 1514}, rec)
		}
		Expect(rec.dropped).To(HaveLen(1))
		Expect(c.Stats().PendingDropDestFull).To(Equal(uint64(1)))
	})

	It("expires entries after the reachable time and refreshes busy ones", func() {
		c = newCache(arp.Config{ReachableTime: 10 * time.Second, RefreshBefore: 2 * time.Second})
		c.Insert(0, ipPeer, macPeer, rec)
		_, ok := c.Resolve(7*time.Second, ipPeer, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue())
		Expect(rec.arps).To(BeEmpty())
		_, ok = c.Resolve(8*time.Second, ipPeer, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue())
		Expect(rec.arps).To(HaveLen(1), "unicast refresh")
		Expect(rec.arps[0].dst).To(Equal(macPeer))
		_, ok = c.Resolve(9*time.Second, ipPeer, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue())
		Expect(rec.arps).To(HaveLen(1), "one refresh at a time")
		Expect(c.Poll(9*time.Second, rec)).To(Equal(10 * time.Second))
		c.Poll(10*time.Second, rec)
		Expect(c.Len()).To(Equal(0))
		Expect(c.Stats().Expired).To(Equal(uint64(1)))
		Expect(c.Stats().TxRefreshes).To(Equal(uint64(1)))
	})

	It("a refresh reply extends the entry", func() {
		c = newCache(arp.Config{ReachableTime: 10 * time.Second, RefreshBefore: 2 * time.Second})
		c.Insert(0, ipPeer, macPeer, rec)
		c.Resolve(9*time.Second, ipPeer, &hw.Mbuf{}, rec)
		c.Input(9*time.Second, arp.Repr{Op: arp.OpReply, SenderHW: macPeer, SenderIP: ipPeer, TargetHW: macUs, TargetIP: ipUs}, rec)
		Expect(c.Poll(10*time.Second, rec)).To(Equal(19 * time.Second))
		_, ok := c.Lookup(ipPeer)
		Expect(ok).To(BeTrue())
	})

	It("announces itself on Start with gratuitous ARP", func() {
		c = newCache(arp.Config{GratuitousCount: 2, GratuitousInterval: 500 * time.Millisecond})
		c.Start(time.Second)
		Expect(c.Poll(0, rec)).To(Equal(time.Second))
		Expect(c.Poll(time.Second, rec)).To(Equal(1500 * time.Millisecond))
		Expect(c.Poll(1500*time.Millisecond, rec)).To(Equal(arp.Never))
		Expect(rec.arps).To(HaveLen(2))
		for _, a := range rec.arps {
			Expect(a.dst).To(Equal(ether.BroadcastAddr()))
			Expect(a.r.IsGratuitous()).To(BeTrue())
			Expect(a.r.SenderIP).To(Equal(ipUs))
			Expect(a.r.TargetHW).To(Equal(ether.Addr{}))
		}
		c.Announce(2*time.Second, rec)
		Expect(c.Stats().TxGratuitous).To(Equal(uint64(3)))
	})

	It("can be told not to announce", func() {
		c = newCache(arp.Config{NoGratuitous: true})
		c.Start(0)
		c.Poll(0, rec)
		Expect(rec.arps).To(BeEmpty())
	})

	It("answers requests for our address and learns the asker (RFC 826)", func() {
		c.Input(0, arp.Repr{Op: arp.OpRequest, SenderHW: macPeer, SenderIP: ipPeer, TargetIP: ipUs}, rec)
		Expect(rec.arps).To(HaveLen(1))
		Expect(rec.arps[0].dst).To(Equal(macPeer))
		Expect(rec.arps[0].r).To(Equal(arp.Repr{Op: arp.OpReply, SenderHW: macUs, SenderIP: ipUs, TargetHW: macPeer, TargetIP: ipPeer}))
		mac, ok := c.Lookup(ipPeer)
		Expect(ok).To(BeTrue())
		Expect(mac).To(Equal(macPeer))
		Expect(c.Stats().Learned).To(Equal(uint64(1)))
	})

	It("does not learn from traffic aimed elsewhere, but merges known senders", func() {
		c.Input(0, arp.Repr{Op: arp.OpRequest, SenderHW: macPeer, SenderIP: ipPeer, TargetIP: ipOther}, rec)
		_, ok := c.Lookup(ipPeer)
		Expect(ok).To(BeFalse())
		Expect(rec.arps).To(BeEmpty())
		Expect(c.Stats().RxIgnored).To(Equal(uint64(1)))

		c.Insert(0, ipPeer, macPeer, rec)
		// A gratuitous ARP from the peer with a new MAC updates it.
		c.Input(time.Second, arp.Repr{Op: arp.OpRequest, SenderHW: macNew, SenderIP: ipPeer, TargetIP: ipPeer}, rec)
		mac, _ := c.Lookup(ipPeer)
		Expect(mac).To(Equal(macNew))
		Expect(c.Stats().Updated).To(Equal(uint64(1)))
	})

	It("counts conflicts for our address and never learns them", func() {
		c.Input(0, arp.Repr{Op: arp.OpReply, SenderHW: macPeer, SenderIP: ipUs, TargetIP: ipUs}, rec)
		Expect(c.Stats().RxConflicts).To(Equal(uint64(1)))
		Expect(c.Len()).To(Equal(0))
	})

	It("does not learn from ARP probes (sender 0.0.0.0) but answers them", func() {
		c.Input(0, arp.Repr{Op: arp.OpRequest, SenderHW: macPeer, TargetIP: ipUs}, rec)
		Expect(c.Len()).To(Equal(0))
		Expect(rec.arps).To(HaveLen(1))
	})

	It("evicts when the table is full, resolved entries first", func() {
		c = newCache(arp.Config{MaxEntries: 2})
		m := &hw.Mbuf{}
		c.Resolve(0, ipPeer, m, rec)                     // incomplete
		c.Insert(time.Millisecond, ipOther, macNew, rec) // resolved
		c.Resolve(2*time.Millisecond, [4]byte{10, 0, 0, 9}, &hw.Mbuf{}, rec)
		_, ok := c.Lookup(ipOther)
		Expect(ok).To(BeFalse(), "the resolved entry went first")
		Expect(c.Pending()).To(Equal(2))
		c.Resolve(3*time.Millisecond, [4]byte{10, 0, 0, 10}, &hw.Mbuf{}, rec)
		Expect(rec.dropped).To(Equal([]*hw.Mbuf{m}), "then the oldest resolution")
		st := c.Stats()
		Expect(st.Evicted).To(Equal(uint64(2)))
		Expect(st.PendingDropEvicted).To(Equal(uint64(1)))
	})

	It("flushes everything", func() {
		c.Resolve(0, ipPeer, &hw.Mbuf{}, rec)
		c.Flush(rec)
		Expect(rec.dropped).To(HaveLen(1))
		Expect(c.Len()).To(Equal(0))
		Expect(c.Poll(time.Hour, rec)).To(Equal(arp.Never))
	})

	It("is deterministic: same calls, same output", func() {
		run := func() []sent {
			c := newCache(arp.Config{MaxEntries: 4})
			r := &recorder{}
			for k := range 20 {
				ip := [4]byte{10, 0, 0, byte(2 + k%7)}
				c.Resolve(time.Duration(k)*100*time.Millisecond, ip, &hw.Mbuf{}, r)
				c.Poll(time.Duration(k)*100*time.Millisecond, r)
			}
			return r.arps
		}
		Expect(run()).To(Equal(run()))
	})
})

var _ = Describe("Config", func() {
	DescribeTable("Validate names the key", func(cfg arp.Config, key string) {
		Expect(cfg.Validate()).To(MatchError(HavePrefix(key + ":")))
	},
		Entry("reachable", arp.Config{ReachableTime: -1}, "reachable_time"),
		Entry("refresh", arp.Config{ReachableTime: time.Second, RefreshBefore: time.Second}, "refresh_before"),
		Entry("retransmit", arp.Config{RetransmitInterval: -1}, "retransmit_interval"),
		Entry("requests", arp.Config{MaxRequests: -1}, "max_requests"),
		Entry("entries", arp.Config{MaxEntries: -1}, "max_entries"),
		Entry("per dest", arp.Config{PendingPerDest: 5000}, "pending_per_dest"),
		Entry("total", arp.Config{PendingTotal: -2}, "pending_total"),
		Entry("gratuitous", arp.Config{GratuitousCount: -1}, "gratuitous_count"),
		Entry("interval", arp.Config{GratuitousInterval: -1}, "gratuitous_interval"),
	)
	It("fills defaults", func() {
		Expect(arp.Config{}.WithDefaults()).To(Equal(arp.DefaultConfig()))
		Expect(arp.DefaultConfig().Validate()).To(Succeed())
		_, err := arp.NewCache(arp.Config{MaxEntries: -1}, ipUs, macUs)
		Expect(err).To(MatchError(ContainSubstring("arp config: max_entries")))
	})
})
