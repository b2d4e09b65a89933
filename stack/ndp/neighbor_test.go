package ndp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

func state(n *ndp.Node, a ipv6.Addr) ndp.State {
	e, ok := n.Neighbor(a)
	if !ok {
		return 0
	}
	return e.State
}

var _ = Describe("Neighbour cache (RFC 4861 section 7.3)", func() {
	var (
		n   *ndp.Node
		rec *recorder
	)
	BeforeEach(func() { n, rec = upNode(quiet()) })

	It("resolves: multicast solicitation, packets queued, sent on the answer (7.2.2)", func() {
		m1, m2 := &hw.Mbuf{}, &hw.Mbuf{}
		_, ok := n.Resolve(0, llPeer, m1, rec)
		Expect(ok).To(BeFalse())
		_, ok = n.Resolve(time.Millisecond, llPeer, m2, rec)
		Expect(ok).To(BeFalse())
		Expect(state(n, llPeer)).To(Equal(ndp.Incomplete))
		Expect(rec.msgs).To(HaveLen(1), "one solicitation per resolution")
		out := rec.msgs[0].out
		Expect(out.Src).To(Equal(llUs))
		Expect(out.Dst).To(Equal(llPeer.SolicitedNode()))
		Expect(out.LinkDst).To(Equal(ether.Addr{0x33, 0x33, 0xff, llPeer[13], llPeer[14], llPeer[15]}))
		Expect(out.HopLimit).To(Equal(uint8(255)))
		ns, err := ndp.ParseNeighborSolicit(out.Msg)
		Expect(err).NotTo(HaveOccurred())
		Expect(ns).To(Equal(ndp.NeighborSolicit{Target: llPeer, Options: slla(macUs)}))

		advertise(n, rec, 2*time.Millisecond, ndp.NeighborAdvert{Solicited: true, Override: true, Target: llPeer, Options: tlla(macPeer)})
		Expect(rec.pending).To(Equal([]*hw.Mbuf{m1, m2}), "in order")
		Expect(rec.macs).To(ConsistOf(macPeer, macPeer))
		Expect(state(n, llPeer)).To(Equal(ndp.Reachable))
		mac, ok := n.Resolve(3*time.Millisecond, llPeer, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue())
		Expect(mac).To(Equal(macPeer))
		Expect(n.Stats().Resolved).To(Equal(uint64(1)))
		Expect(n.Pending()).To(Equal(0))
	})

	It("gives up after MAX_MULTICAST_SOLICIT (3) solicitations, RETRANS_TIMER (1 s) apart, and hands the queue back as address unreachable (7.2.2)", func() {
		m1, m2 := &hw.Mbuf{}, &hw.Mbuf{}
		n.Resolve(0, gPeer, m1, rec)
		n.Resolve(0, gPeer, m2, rec)
		Expect(n.Poll(0, rec)).To(Equal(time.Second))
		run(n, rec, 0, 10*time.Second)
		nss := rec.of(icmpv6.TypeNeighborSolicitation)
		Expect(nss).To(HaveLen(3))
		Expect([]time.Duration{nss[0].at, nss[1].at, nss[2].at}).To(Equal([]time.Duration{0, time.Second, 2 * time.Second}))
		Expect(rec.unreachable).To(Equal([]*hw.Mbuf{m1, m2}))
		Expect(rec.dropped).To(BeEmpty())
		_, ok := n.Neighbor(gPeer)
		Expect(ok).To(BeFalse())
		st := n.Stats()
		Expect(st.ResolutionsFailed).To(Equal(uint64(1)))
		Expect(st.PendingUnreachable).To(Equal(uint64(2)))
	})

	It("bounds the queue per destination and in total, counting drops (Linux unres_qlen)", func() {
		cfg := quiet()
		cfg.PendingPerDest, cfg.PendingTotal = 2, 3
		n, rec = upNode(cfg)
		for range 3 {
			n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
		}
		for range 2 {
			n.Resolve(0, gPeer, &hw.Mbuf{}, rec)
		}
		st := n.Stats()
		Expect(st.PendingQueued).To(Equal(uint64(3)))
		Expect(st.PendingDropDestFull).To(Equal(uint64(1)))
		Expect(st.PendingDropTotalFull).To(Equal(uint64(1)))
		Expect(rec.dropped).To(HaveLen(2))

		cfg = quiet()
		cfg.PendingBytesPerDest = 2 * (1000 + ndp.PendingOverhead)
		n, rec = upNode(cfg)
		for range 3 {
			n.Resolve(0, llPeer, &hw.Mbuf{PktLen: 1000}, rec)
		}
		Expect(n.Stats().PendingDropDestFull).To(Equal(uint64(1)), "bytes bound")
	})

	It("goes REACHABLE -> STALE after ReachableTime, DELAY on use, PROBE after DELAY_FIRST_PROBE_TIME, and discards after MAX_UNICAST_SOLICIT probes (7.3.3)", func() {
		n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
		advertise(n, rec, 0, ndp.NeighborAdvert{Solicited: true, Target: llPeer, Options: tlla(macPeer)})
		rt := n.ReachableTime()
		Expect(rt).To(BeNumerically(">=", 15*time.Second))
		Expect(rt).To(BeNumerically("<", 45*time.Second))
		run(n, rec, 0, rt-1)
		Expect(state(n, llPeer)).To(Equal(ndp.Reachable))
		run(n, rec, rt-1, rt)
		Expect(state(n, llPeer)).To(Equal(ndp.Stale))
		rec.reset()

		t := rt + time.Second
		mac, ok := n.Resolve(t, llPeer, &hw.Mbuf{}, rec)
		Expect(ok).To(BeTrue(), "a STALE entry is used at once")
		Expect(mac).To(Equal(macPeer))
		Expect(state(n, llPeer)).To(Equal(ndp.Delay))
		run(n, rec, t, t+5*time.Second-1)
		Expect(rec.msgs).To(BeEmpty())
		run(n, rec, t+5*time.Second-1, t+5*time.Second)
		Expect(state(n, llPeer)).To(Equal(ndp.Probe))
		run(n, rec, t+5*time.Second, t+20*time.Second)
		probes := rec.of(icmpv6.TypeNeighborSolicitation)
		Expect(probes).To(HaveLen(3))
		for _, p := range probes {
			Expect(p.out.Dst).To(Equal(llPeer), "unicast")
			Expect(p.out.LinkDst).To(Equal(macPeer))
		}
		Expect(probes[1].at - probes[0].at).To(Equal(time.Second))
		_, ok = n.Neighbor(llPeer)
		Expect(ok).To(BeFalse())
		Expect(n.Stats().NUDFailed).To(Equal(uint64(1)))
		Expect(n.Stats().TxProbes).To(Equal(uint64(3)))
	})

	It("takes an upper-layer confirmation in DELAY back to REACHABLE without a probe (7.3.1)", func() {
		n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
		advertise(n, rec, 0, ndp.NeighborAdvert{Target: llPeer, Options: tlla(macPeer)})
		Expect(state(n, llPeer)).To(Equal(ndp.Stale), "unsolicited answer: STALE")
		rec.reset()
		n.Resolve(time.Second, llPeer, &hw.Mbuf{}, rec)
		Expect(state(n, llPeer)).To(Equal(ndp.Delay))
		n.Confirm(2*time.Second, llPeer)
		Expect(state(n, llPeer)).To(Equal(ndp.Reachable))
		run(n, rec, 2*time.Second, 10*time.Second)
		Expect(rec.msgs).To(BeEmpty())
		Expect(n.Stats().Confirmations).To(Equal(uint64(1)))
		n.Confirm(0, gPeer)
		Expect(n.Stats().Confirmations).To(Equal(uint64(1)), "no entry, nothing to confirm")
	})

	It("draws ReachableTime between 0.5 and 1.5 times BaseReachableTime from the caller's source (6.3.2)", func() {
		seen := map[time.Duration]bool{}
		for seed := range uint64(20) {
			a, b := newNode(quiet(), seed), newNode(quiet(), seed)
			Expect(a.ReachableTime()).To(Equal(b.ReachableTime()), "deterministic")
			Expect(a.ReachableTime()).To(BeNumerically(">=", 15*time.Second))
			Expect(a.ReachableTime()).To(BeNumerically("<", 45*time.Second))
			seen[a.ReachableTime()] = true
		}
		Expect(len(seen)).To(BeNumerically(">", 10), "random")
	})

	Describe("Neighbor Advertisement effects (7.2.5, appendix C)", func() {
		type tlla int
		const (
			none tlla = iota
			same
			different
		)
		// prepare leaves an entry for llPeer with MAC macPeer in st.
		prepare := func(st ndp.State) {
			if st == ndp.Incomplete {
				n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
				return
			}
			n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
			advertise(n, rec, 0, ndp.NeighborAdvert{Solicited: st == ndp.Reachable, Target: llPeer, Options: ndp.Options{TargetLinkAddr: macPeer, HasTargetLinkAddr: true}})
			switch st {
			case ndp.Delay:
				n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
			case ndp.Probe:
				n.Resolve(0, llPeer, &hw.Mbuf{}, rec)
				run(n, rec, 0, 5*time.Second)
			}
			Expect(state(n, llPeer)).To(Equal(st))
		}
		DescribeTable("state and link-layer address after the advertisement",
			func(from ndp.State, s, o bool, t tlla, want ndp.State, wantMAC ether.Addr) {
				prepare(from)
				na := ndp.NeighborAdvert{Solicited: s, Override: o, Target: llPeer}
				switch t {
				case same:
					na.Options = ndp.Options{TargetLinkAddr: macPeer, HasTargetLinkAddr: true}
				case different:
					na.Options = ndp.Options{TargetLinkAddr: macNew, HasTargetLinkAddr: true}
				}
				advertise(n, rec, 5*time.Second, na)
				e, ok := n.Neighbor(llPeer)
				Expect(ok).To(BeTrue())
				Expect(e.State).To(Equal(want))
				Expect(e.MAC).To(Equal(wantMAC))
			},
			Entry("INCOMPLETE, no TLLA: discarded", ndp.Incomplete, true, true, none, ndp.Incomplete, ether.Addr{}),
			Entry("INCOMPLETE, S=0, TLLA: STALE", ndp.Incomplete, false, false, different, ndp.Stale, macNew),
			Entry("INCOMPLETE, S=1, TLLA: REACHABLE", ndp.Incomplete, true, false, different, ndp.Reachable, macNew),
			Entry("REACHABLE, O=0, different: STALE, address kept", ndp.Reachable, true, false, different, ndp.Stale, macPeer),
			Entry("STALE, O=0, different: ignored", ndp.Stale, true, false, different, ndp.Stale, macPeer),
			Entry("DELAY, O=0, different: ignored", ndp.Delay, true, false, different, ndp.Delay, macPeer),
			Entry("REACHABLE, O=1, S=0, different: STALE, updated", ndp.Reachable, false, true, different, ndp.Stale, macNew),
			Entry("PROBE, O=1, S=0, different: STALE, updated", ndp.Probe, false, true, different, ndp.Stale, macNew),
			Entry("STALE, S=1, same: REACHABLE", ndp.Stale, true, false, same, ndp.Reachable, macPeer),
			Entry("PROBE, S=1, no TLLA: REACHABLE", ndp.Probe, true, false, none, ndp.Reachable, macPeer),
			Entry("DELAY, O=1, S=1, different: REACHABLE, updated", ndp.Delay, true, true, different, ndp.Reachable, macNew),
			Entry("STALE, S=0, same: unchanged", ndp.Stale, false, true, same, ndp.Stale, macPeer),
			Entry("REACHABLE, S=0, no TLLA: unchanged", ndp.Reachable, false, false, none, ndp.Reachable, macPeer),
		)

		It("discards an advertisement with no entry (7.2.5)", func() {
			advertise(n, rec, 0, ndp.NeighborAdvert{Override: true, Target: llPeer, Options: ndp.Options{TargetLinkAddr: macPeer, HasTargetLinkAddr: true}})
			_, ok := n.Neighbor(llPeer)
			Expect(ok).To(BeFalse())
			Expect(n.Stats().RxAdvertsUnknown).To(Equal(uint64(1)))
		})
	})

	Describe("Neighbor Solicitations for our address (7.2.3, 7.2.4)", func() {
		It("records the sender STALE and answers unicast with S=1, O=1 and our link-layer address", func() {
			n.Input(0, nd(llPeer, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs, Options: slla(macPeer)}, llPeer, llUs.SolicitedNode()), rec)
			Expect(state(n, llPeer)).To(Equal(ndp.Stale))
			Expect(rec.msgs).To(HaveLen(1))
			out := rec.msgs[0].out
			Expect(out.Src).To(Equal(llUs))
			Expect(out.Dst).To(Equal(llPeer))
			Expect(out.LinkDst).To(Equal(macPeer))
			na, err := ndp.ParseNeighborAdvert(out.Msg)
			Expect(err).NotTo(HaveOccurred())
			Expect(na).To(Equal(ndp.NeighborAdvert{Solicited: true, Override: true, Target: llUs, Options: ndp.Options{TargetLinkAddr: macUs, HasTargetLinkAddr: true}}))
		})
		It("updates a changed link-layer address to STALE and sends what waited on an INCOMPLETE entry", func() {
			m := &hw.Mbuf{}
			n.Resolve(0, llPeer, m, rec)
			n.Input(0, nd(llPeer, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs, Options: slla(macPeer)}, llPeer, llUs.SolicitedNode()), rec)
			Expect(rec.pending).To(Equal([]*hw.Mbuf{m}))
			n.Input(0, nd(llPeer, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs, Options: slla(macNew)}, llPeer, llUs.SolicitedNode()), rec)
			e, _ := n.Neighbor(llPeer)
			Expect(e.MAC).To(Equal(macNew))
			Expect(e.State).To(Equal(ndp.Stale))
		})
		It("answers a node doing DAD for our address to all-nodes with S=0", func() {
			n.Input(0, nd(ipv6.Addr{}, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs}, ipv6.Addr{}, llUs.SolicitedNode()), rec)
			Expect(rec.msgs).To(HaveLen(1))
			Expect(rec.msgs[0].out.Dst).To(Equal(ipv6.AllNodes()))
			na, _ := ndp.ParseNeighborAdvert(rec.msgs[0].out.Msg)
			Expect(na.Solicited).To(BeFalse())
			Expect(na.Override).To(BeTrue())
			Expect(n.Neighbors()).To(Equal(0), "nothing learnt from ::")
		})
		It("ignores a solicitation for an address that is not ours", func() {
			n.Input(0, nd(llPeer, gPeer.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: gPeer, Options: slla(macPeer)}, llPeer, gPeer.SolicitedNode()), rec)
			Expect(rec.msgs).To(BeEmpty())
			Expect(n.Stats().RxSolicitsNotForUs).To(Equal(uint64(1)))
		})
	})

	It("evicts a STALE entry first when the table is full", func() {
		cfg := quiet()
		cfg.MaxNeighbors = 2
		n, rec = upNode(cfg)
		m := &hw.Mbuf{}
		n.Resolve(0, gPeer, m, rec)
		n.Input(0, nd(llPeer, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs, Options: slla(macPeer)}, llPeer, llUs.SolicitedNode()), rec)
		n.Resolve(0, farAway, &hw.Mbuf{}, rec)
		_, ok := n.Neighbor(llPeer)
		Expect(ok).To(BeFalse(), "the STALE entry went")
		Expect(state(n, gPeer)).To(Equal(ndp.Incomplete))
		Expect(n.Stats().Evicted).To(Equal(uint64(1)))
	})
})
