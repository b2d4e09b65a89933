package ndp_test

import (
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

var _ = Describe("A default router configured by hand (Config.DefaultRouter; RFC 4861 sections 6.3.4, 6.3.6)", func() {
	withRouter := func(a ipv6.Addr) ndp.Config {
		c := quiet()
		c.DefaultRouter = netip.AddrFrom16(a)
		return c
	}

	It("is on the default router list from Start, for good, and the next hop of every off-link destination (5.2, 6.3.6)", func() {
		n, rec := upNode(withRouter(llRouter))
		Expect(n.Routers(nil)).To(Equal([]ndp.RouterInfo{{Addr: llRouter, Expires: ndp.Never, Static: true}}))
		Expect(n.Stats().RoutersAdded).To(Equal(uint64(1)))
		hop, ok := n.NextHop(2*time.Second, farAway)
		Expect(ok).To(BeTrue())
		Expect(hop).To(Equal(llRouter))
		hop, ok = n.NextHop(2*time.Second, llPeer)
		Expect(ok).To(BeTrue())
		Expect(hop).To(Equal(llPeer), "on-link: direct")
		run(n, rec, 2*time.Second, 1000*time.Hour)
		Expect(n.Routers(nil)).To(HaveLen(1), "never expires")
		Expect(n.Stats().RoutersExpired).To(BeZero())
		hop, ok = n.NextHop(1000*time.Hour, farAway)
		Expect(ok).To(BeTrue())
		Expect(hop).To(Equal(llRouter))
	})

	It("stays when its advertisements give a lifetime of 0 or its Neighbor Advertisement clears the R flag, while the rest of them applies (7.2.5)", func() {
		n, rec := upNode(withRouter(llRouter))
		ra(n, rec, 2*time.Second, ndp.RouterAdvert{RouterLifetime: 0, CurHopLimit: 33, Options: slla(macRouter)})
		Expect(n.Routers(nil)).To(Equal([]ndp.RouterInfo{{Addr: llRouter, Expires: ndp.Never, Static: true}}))
		Expect(n.CurHopLimit()).To(Equal(uint8(33)), "the advertisement's other parameters apply")
		ra(n, rec, 3*time.Second, ndp.RouterAdvert{RouterLifetime: 10})
		Expect(n.Routers(nil)).To(Equal([]ndp.RouterInfo{{Addr: llRouter, Expires: ndp.Never, Static: true}}), "a lifetime does not make it expire")
		advertise(n, rec, 4*time.Second, ndp.NeighborAdvert{Router: false, Override: true, Target: llRouter, Options: tlla(macRouter)})
		Expect(n.Routers(nil)).To(HaveLen(1), "an R flag cleared does not remove it")
		Expect(n.Stats().RoutersRemoved).To(BeZero())
		// A router learnt from advertisements goes as before.
		n.Input(5*time.Second, nd(llRouter2, ipv6.AllNodes()), emitRA(ndp.RouterAdvert{RouterLifetime: 10}, llRouter2, ipv6.AllNodes()), rec)
		Expect(n.Routers(nil)).To(HaveLen(2))
		Expect(n.Routers(nil)[0].Addr).To(Equal(llRouter), "the configured router first")
		run(n, rec, 5*time.Second, 20*time.Second)
		Expect(n.Routers(nil)).To(Equal([]ndp.RouterInfo{{Addr: llRouter, Expires: ndp.Never, Static: true}}))
	})

	It("has no default router without it: an off-link destination has no route (6.3.6, RFC 4443 section 3.1)", func() {
		n, _ := upNode(quiet())
		_, ok := n.NextHop(2*time.Second, farAway)
		Expect(ok).To(BeFalse())
		Expect(n.Stats().NoRoute).To(Equal(uint64(1)))
	})

	It("solicits the router's address when a packet goes to an off-link destination (7.2.2)", func() {
		n, rec := upNode(withRouter(llRouter))
		hop, _ := n.NextHop(2*time.Second, farAway)
		m := &hw.Mbuf{}
		_, ok := n.Resolve(2*time.Second, hop, m, rec)
		Expect(ok).To(BeFalse(), "INCOMPLETE until the router answers")
		nss := rec.of(icmpv6.TypeNeighborSolicitation)
		Expect(nss).To(HaveLen(1))
		ns, err := ndp.ParseNeighborSolicit(nss[0].out.Msg)
		Expect(err).NotTo(HaveOccurred())
		Expect(ns.Target).To(Equal(llRouter))
		Expect(nss[0].out.Dst).To(Equal(llRouter.SolicitedNode()))
		advertise(n, rec, 2*time.Second+time.Millisecond, ndp.NeighborAdvert{Router: true, Solicited: true, Override: true, Target: llRouter, Options: tlla(macRouter)})
		Expect(rec.pending).To(Equal([]*hw.Mbuf{m}), "the waiting packet goes out")
		Expect(rec.macs).To(Equal([]ether.Addr{macRouter}), "to the router's MAC")
	})

	DescribeTable("Validate refuses what is not a unicast IPv6 address, naming the key",
		func(s string) {
			c := ndp.DefaultConfig()
			c.DefaultRouter = netip.MustParseAddr(s)
			Expect(c.Validate()).To(MatchError(ContainSubstring("default_router: ")))
		},
		Entry("multicast", "ff02::2"),
		Entry("unspecified", "::"),
		Entry("loopback", "::1"),
		Entry("IPv4", "192.0.2.1"),
		Entry("IPv4-mapped", "::ffff:192.0.2.1"),
		Entry("with a zone", "fe80::1%eth0"),
	)
})
