package ndp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

var _ = Describe("Router discovery (RFC 4861 section 6.3)", func() {
	var (
		n   *ndp.Node
		rec *recorder
	)
	BeforeEach(func() { n, rec = upNode(quiet()) })

	It("solicits up to MAX_RTR_SOLICITATIONS (3) times, RTR_SOLICITATION_INTERVAL (4 s) apart, from the link-local address once DAD assigned it (6.3.7)", func() {
		n = newNode(quiet(), 1)
		rec = &recorder{}
		Expect(n.Start(0, rec)).To(Succeed())
		run(n, rec, 0, time.Minute)
		rss := rec.of(icmpv6.TypeRouterSolicitation)
		Expect(rss).To(HaveLen(3))
		Expect(rss[0].at).To(Equal(time.Second), "after DAD's RetransTimer")
		Expect(rss[1].at - rss[0].at).To(Equal(4 * time.Second))
		Expect(rss[2].at - rss[1].at).To(Equal(4 * time.Second))
		Expect(rss[0].out.Src).To(Equal(llUs))
		Expect(rss[0].out.Dst).To(Equal(ipv6.AllRouters()))
		rs, err := ndp.ParseRouterSolicit(rss[0].out.Msg)
		Expect(err).NotTo(HaveOccurred())
		Expect(rs.Options).To(Equal(slla(macUs)))
	})

	It("stops soliciting after an advertisement with a non-zero lifetime (6.3.7)", func() {
		n = newNode(quiet(), 1)
		rec = &recorder{}
		Expect(n.Start(0, rec)).To(Succeed())
		run(n, rec, 0, 2*time.Second)
		ra(n, rec, 2*time.Second, ndp.RouterAdvert{RouterLifetime: 1800})
		run(n, rec, 2*time.Second, time.Minute)
		Expect(rec.of(icmpv6.TypeRouterSolicitation)).To(HaveLen(1))
	})

	It("keeps the default router list by lifetime and reports expiry (6.3.4, 6.3.5)", func() {
		ra(n, rec, 0, ndp.RouterAdvert{RouterLifetime: 10, Options: slla(macRouter)})
		Expect(n.Routers(nil)).To(Equal([]ndp.RouterInfo{{Addr: llRouter, Expires: 10 * time.Second}}))
		e, ok := n.Neighbor(llRouter)
		Expect(ok).To(BeTrue())
		Expect(e.IsRouter).To(BeTrue())
		Expect(e.State).To(Equal(ndp.Stale), "learnt from the SLLA")
		ra(n, rec, 5*time.Second, ndp.RouterAdvert{RouterLifetime: 10})
		run(n, rec, 5*time.Second, 15*time.Second-1)
		Expect(n.Routers(nil)).To(HaveLen(1), "refreshed")
		run(n, rec, 15*time.Second-1, 15*time.Second)
		Expect(n.Routers(nil)).To(BeEmpty())
		Expect(rec.eventsOf(ndp.EventRouterExpired)).To(Equal([]ndp.Event{{Kind: ndp.EventRouterExpired, Addr: llRouter}}))
		Expect(n.Stats().RoutersExpired).To(Equal(uint64(1)))

		ra(n, rec, 20*time.Second, ndp.RouterAdvert{RouterLifetime: 10})
		ra(n, rec, 21*time.Second, ndp.RouterAdvert{RouterLifetime: 0})
		Expect(n.Routers(nil)).To(BeEmpty(), "lifetime 0 times the router out at once")
		Expect(n.Stats().RoutersRemoved).To(Equal(uint64(1)))
	})

	It("takes Cur Hop Limit, Reachable Time, Retrans Timer and the M/O flags (6.3.4)", func() {
		ra(n, rec, 0, ndp.RouterAdvert{CurHopLimit: 42, Managed: true, ReachableTime: 10000, RetransTimer: 500})
		Expect(n.CurHopLimit()).To(Equal(uint8(42)))
		Expect(n.RetransTimer()).To(Equal(500 * time.Millisecond))
		Expect(n.ReachableTime()).To(BeNumerically(">=", 5*time.Second))
		Expect(n.ReachableTime()).To(BeNumerically("<", 15*time.Second))
		m, o := n.ManagedOther()
		Expect(m).To(BeTrue())
		Expect(o).To(BeFalse())
		ra(n, rec, 0, ndp.RouterAdvert{})
		Expect(n.CurHopLimit()).To(Equal(uint8(42)), "0 is unspecified")
		Expect(n.RetransTimer()).To(Equal(500 * time.Millisecond))
	})

	DescribeTable("sets the link MTU from the MTU option only within 1280..LinkMTU (6.3.4)", func(mtu uint32, want int, ignored uint64) {
		ra(n, rec, 0, ndp.RouterAdvert{Options: ndp.Options{MTU: mtu, HasMTU: true}})
		Expect(n.LinkMTU()).To(Equal(want))
		Expect(n.Stats().RxMTUIgnored).To(Equal(ignored))
	},
		Entry("1400", uint32(1400), 1400, uint64(0)),
		Entry("1280", uint32(1280), 1280, uint64(0)),
		Entry("1279, below IPv6's minimum", uint32(1279), 1500, uint64(1)),
		Entry("9000, above the link's", uint32(9000), 1500, uint64(1)),
	)

	Describe("next-hop determination (5.2) and the destination cache", func() {
		It("sends on-link destinations direct and the rest to the default router", func() {
			_, ok := n.NextHop(0, farAway)
			Expect(ok).To(BeFalse(), "no router: no route")
			Expect(n.Stats().NoRoute).To(Equal(uint64(1)))

			ra(n, rec, 0, ndp.RouterAdvert{RouterLifetime: 9000, Options: ndp.Options{Prefixes: []ndp.PrefixInfo{
				{PrefixLen: 64, OnLink: true, ValidLifetime: 3600, PreferredLifetime: 1800, Prefix: gPrefix},
			}}})
			hop, ok := n.NextHop(0, gPeer)
			Expect(ok).To(BeTrue())
			Expect(hop).To(Equal(gPeer), "on-link by the prefix list")
			hop, _ = n.NextHop(0, llPeer)
			Expect(hop).To(Equal(llPeer), "link-local is on-link")
			hop, _ = n.NextHop(0, farAway)
			Expect(hop).To(Equal(llRouter))
			Expect(n.Destinations()).To(Equal(3))

			// The prefix expires: fd00::2 now goes through the router.
			run(n, rec, 0, time.Hour)
			Expect(n.Prefixes(nil)).To(BeEmpty())
			Expect(n.Destinations()).To(Equal(0), "flushed")
			hop, _ = n.NextHop(time.Hour, gPeer)
			Expect(hop).To(Equal(llRouter))
		})

		It("prefers a router known reachable, else goes round-robin (6.3.6)", func() {
			ra(n, rec, 0, ndp.RouterAdvert{RouterLifetime: 1800})
			n.Input(0, nd(llRouter2, ipv6.AllNodes()), emitRA(ndp.RouterAdvert{RouterLifetime: 1800}, llRouter2, ipv6.AllNodes()), rec)
			a, _ := n.NextHop(0, farAway)
			b, _ := n.NextHop(0, mustAddr("2001:db8::2"))
			Expect([]ipv6.Addr{a, b}).To(ConsistOf(llRouter, llRouter2), "round robin over unknown routers")

			n.Input(0, nd(llRouter2, ipv6.AllNodes()), emitRA(ndp.RouterAdvert{RouterLifetime: 1800, Options: slla(macRouter)}, llRouter2, ipv6.AllNodes()), rec)
			for _, d := range []string{"2001:db8::3", "2001:db8::4", "2001:db8::5"} {
				h, _ := n.NextHop(0, mustAddr(d))
				Expect(h).To(Equal(llRouter2), "the one with a cache entry")
			}
		})

		It("drops a router whose advertisement clears the R flag (7.2.5)", func() {
			ra(n, rec, 0, ndp.RouterAdvert{RouterLifetime: 1800, Options: slla(macRouter)})
			n.Resolve(0, llRouter, &hw.Mbuf{}, rec)
			advertise(n, rec, 0, ndp.NeighborAdvert{Router: false, Solicited: true, Target: llRouter})
			Expect(n.Routers(nil)).To(BeEmpty())
			e, _ := n.Neighbor(llRouter)
			Expect(e.IsRouter).To(BeFalse())
		})
	})

	It("counts a valid Redirect and does not follow it (8.1)", func() {
		ra(n, rec, 0, ndp.RouterAdvert{RouterLifetime: 1800})
		hop, _ := n.NextHop(0, farAway)
		Expect(hop).To(Equal(llRouter))
		rd := ndp.Redirect{Target: llPeer, Destination: farAway, Options: tlla(macPeer)}
		b := make([]byte, rd.Len())
		rd.Emit(b, llRouter, llUs)
		n.Input(0, nd(llRouter, llUs), b, rec)
		hop, _ = n.NextHop(0, farAway)
		Expect(hop).To(Equal(llRouter))
		st := n.Stats()
		Expect(st.RxRedirects).To(Equal(uint64(1)))
		Expect(st.RxRedirectsIgnored).To(Equal(uint64(1)))
		Expect(st.RxRedirectsNotFirstHop).To(Equal(uint64(0)))
		n.Input(0, nd(llPeer, llUs), fixup(b, nd(llPeer, llUs)), rec)
		Expect(n.Stats().RxRedirectsNotFirstHop).To(Equal(uint64(1)))
	})
})
