package ndp_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

func addrState(n *ndp.Node, a ipv6.Addr) ndp.AddrState {
	for _, i := range n.Addresses(nil) {
		if i.Addr == a {
			return i.State
		}
	}
	return 0
}

func slaacPrefix(valid, preferred uint32) ndp.RouterAdvert {
	return ndp.RouterAdvert{Options: ndp.Options{Prefixes: []ndp.PrefixInfo{
		{PrefixLen: 64, OnLink: true, Autonomous: true, ValidLifetime: valid, PreferredLifetime: preferred, Prefix: gPrefix},
	}}}
}

var _ = Describe("Address autoconfiguration (RFC 4862)", func() {
	var (
		n   *ndp.Node
		rec *recorder
	)
	start := func(cfg ndp.Config) {
		cfg.MaxRtrSolicitations = 0
		n = newNode(cfg, 1)
		rec = &recorder{}
		Expect(n.Start(0, rec)).To(Succeed())
	}
	ourSLAAC := gPrefix.WithInterfaceID(ipv6.InterfaceIDFromMAC(macUs))

	It("forms the link-local address from the modified EUI-64 (5.3) and runs DAD on it (5.4.2)", func() {
		start(quiet())
		Expect(llUs).To(Equal(mustAddr("fe80::ff:fe00:1")))
		Expect(addrState(n, llUs)).To(Equal(ndp.AddrTentative))
		Expect(n.IsAssigned(llUs)).To(BeFalse(), "a tentative address is not assigned")
		Expect(n.Groups(nil)).To(ConsistOf(ipv6.AllNodes(), llUs.SolicitedNode()), "joined before the solicitation")
		run(n, rec, 0, time.Second-1)
		nss := rec.of(icmpv6.TypeNeighborSolicitation)
		Expect(nss).To(HaveLen(1), "DupAddrDetectTransmits 1")
		out := nss[0].out
		Expect(out.Src).To(Equal(ipv6.Addr{}))
		Expect(out.Dst).To(Equal(llUs.SolicitedNode()))
		Expect(out.HopLimit).To(Equal(uint8(255)))
		ns, _ := ndp.ParseNeighborSolicit(out.Msg)
		Expect(ns).To(Equal(ndp.NeighborSolicit{Target: llUs}), "no source link-layer address from ::")
		reports := rec.of(icmpv6.TypeMLDv2Report)
		Expect(reports).NotTo(BeEmpty())
		Expect(rec.msgs[0].typ()).To(Equal(icmpv6.TypeMLDv2Report), "the report goes before the solicitation")
		run(n, rec, time.Second-1, time.Second)
		Expect(addrState(n, llUs)).To(Equal(ndp.AddrPreferred), "RetransTimer after the last solicitation")
		Expect(rec.eventsOf(ndp.EventAddressAssigned)).To(Equal([]ndp.Event{{Kind: ndp.EventAddressAssigned, Addr: llUs}}))
	})

	It("waits a random delay up to MAX_RTR_SOLICITATION_DELAY before the first DAD message (5.4.2)", func() {
		cfg := ndp.DefaultConfig()
		cfg.MaxRtrSolicitations = 0
		var firsts []time.Duration
		for seed := range uint64(5) {
			n = newNode(cfg, seed)
			rec = &recorder{}
			Expect(n.Start(0, rec)).To(Succeed())
			run(n, rec, 0, 3*time.Second)
			nss := rec.of(icmpv6.TypeNeighborSolicitation)
			Expect(nss).To(HaveLen(1))
			Expect(nss[0].at).To(BeNumerically("<", time.Second))
			firsts = append(firsts, nss[0].at)
		}
		Expect(firsts).To(ContainElement(BeNumerically(">", 0)))
	})

	// firstNS returns when the first DAD solicitation for target went
	// out, -1 for never.
	firstNS := func(rec *recorder, target ipv6.Addr) time.Duration {
		for _, m := range rec.of(icmpv6.TypeNeighborSolicitation) {
			if ns, err := ndp.ParseNeighborSolicit(m.out.Msg); err == nil && ns.Target == target && m.out.Src == (ipv6.Addr{}) {
				return m.at
			}
		}
		return -1
	}

	It("delays the first DAD solicitation of a static address configured at start by its own random draw, within MAX_RTR_SOLICITATION_DELAY (5.4.2)", func() {
		cfg := ndp.DefaultConfig()
		cfg.MaxRtrSolicitations = 0
		var delays []time.Duration
		differ := 0
		for seed := range uint64(8) {
			n = newNode(cfg, seed)
			rec = &recorder{}
			Expect(n.Start(0, rec)).To(Succeed())
			Expect(n.AddStatic(0, gUs, 64, rec)).To(Succeed())
			run(n, rec, 0, 3*time.Second)
			at := firstNS(rec, gUs)
			Expect(at).To(BeNumerically(">=", 0), "seed %d: a DAD solicitation for %v", seed, gUs)
			Expect(at).To(BeNumerically("<", cfg.MaxRtrSolicitationDelay), "seed %d", seed)
			if firstNS(rec, llUs) != at {
				differ++
			}
			delays = append(delays, at)
			Expect(addrState(n, gUs)).To(Equal(ndp.AddrPreferred), "RetransTimer after it")
		}
		Expect(delays).To(ContainElement(BeNumerically(">", 100*time.Millisecond)), "not at once")
		Expect(differ).To(BeNumerically(">", 4), "a draw of its own, not the link-local address's")
		// The delay comes from the node's seeded source: the same seed,
		// the same delay.
		n = newNode(cfg, 3)
		rec = &recorder{}
		Expect(n.Start(0, rec)).To(Succeed())
		Expect(n.AddStatic(0, gUs, 64, rec)).To(Succeed())
		run(n, rec, 0, 3*time.Second)
		Expect(firstNS(rec, gUs)).To(Equal(delays[3]))
	})

	It("starts DAD at once for a static address added after the node spoke, or with MaxRtrSolicitationDelay 0, and waits no delay without DAD (5.4.2)", func() {
		cfg := ndp.DefaultConfig()
		cfg.MaxRtrSolicitations = 0
		start(cfg)
		run(n, rec, 0, 3*time.Second)
		Expect(rec.msgs).NotTo(BeEmpty())
		a := mustAddr("fd00::1:2:3")
		Expect(n.AddStatic(3*time.Second, a, 64, rec)).To(Succeed())
		run(n, rec, 3*time.Second, 5*time.Second)
		Expect(firstNS(rec, a)).To(Equal(3*time.Second), "not the first message since start: no delay")

		start(quiet())
		Expect(n.AddStatic(0, gUs, 64, rec)).To(Succeed())
		run(n, rec, 0, 2*time.Second)
		Expect(firstNS(rec, gUs)).To(Equal(time.Duration(0)), "the knob at 0 turns the delay off")

		// Without DAD there is no solicitation to delay: assigned, and
		// its group joined and reported, at once.
		// (Not fd00::1, whose solicited-node group the link-local
		// address shares.)
		cfg.DupAddrDetectTransmits = 0
		start(cfg)
		b := mustAddr("fd00::1:2:3")
		Expect(n.AddStatic(0, b, 64, rec)).To(Succeed())
		Expect(n.IsAssigned(b)).To(BeTrue())
		run(n, rec, 0, 0)
		var groups []ipv6.Addr
		for _, m := range rec.of(icmpv6.TypeMLDv2Report) {
			r, err := ndp.ParseReport(m.out.Msg)
			Expect(err).NotTo(HaveOccurred())
			for _, g := range r.Records {
				groups = append(groups, g.Group)
			}
		}
		Expect(groups).To(ContainElement(b.SolicitedNode()), "its group reported at start")
	})

	It("does not answer address resolution for a tentative address (5.4.3)", func() {
		start(quiet())
		n.Input(0, nd(llPeer, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs, Options: slla(macPeer)}, llPeer, llUs.SolicitedNode()), rec)
		Expect(rec.of(icmpv6.TypeNeighborAdvertisement)).To(BeEmpty())
		Expect(n.Stats().RxSolicitsForTentative).To(Equal(uint64(1)))
		Expect(addrState(n, llUs)).To(Equal(ndp.AddrTentative))
	})

	DescribeTable("finds a duplicate, stops using it and reports it (5.4.3, 5.4.4, 5.4.5)",
		func(deliver func(n *ndp.Node, rec *recorder, a ipv6.Addr)) {
			start(quiet())
			run(n, rec, 0, 2*time.Second)
			// Not fd00::1, whose solicited-node group the link-local
			// address shares.
			a := mustAddr("fd00::1:2:3")
			Expect(n.AddStatic(2*time.Second, a, 64, rec)).To(Succeed())
			Expect(addrState(n, a)).To(Equal(ndp.AddrTentative))
			Expect(n.Groups(nil)).To(ContainElement(a.SolicitedNode()))
			deliver(n, rec, a)
			Expect(addrState(n, a)).To(Equal(ndp.AddrDuplicate))
			Expect(n.IsAssigned(a)).To(BeFalse())
			Expect(n.Groups(nil)).NotTo(ContainElement(a.SolicitedNode()), "its group is left")
			Expect(rec.eventsOf(ndp.EventAddressDuplicate)).To(Equal([]ndp.Event{{Kind: ndp.EventAddressDuplicate, Addr: a}}))
			Expect(n.Stats().DADDuplicates).To(Equal(uint64(1)))
			run(n, rec, 2*time.Second, 10*time.Second)
			Expect(addrState(n, a)).To(Equal(ndp.AddrDuplicate), "for good")
			Expect(n.Disabled()).To(BeFalse())
		},
		Entry("an advertisement for the tentative address (5.4.4)", func(n *ndp.Node, rec *recorder, a ipv6.Addr) {
			n.Input(2*time.Second, nd(a, ipv6.AllNodes()), emitNA(ndp.NeighborAdvert{Override: true, Target: a, Options: tlla(macPeer)}, a, ipv6.AllNodes()), rec)
		}),
		Entry("a solicitation from :: for it: another node doing DAD (5.4.3)", func(n *ndp.Node, rec *recorder, a ipv6.Addr) {
			n.Input(2*time.Second, nd(ipv6.Addr{}, a.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: a}, ipv6.Addr{}, a.SolicitedNode()), rec)
		}),
	)

	It("disables the interface when the MAC-derived link-local address is a duplicate (5.4.5)", func() {
		start(quiet())
		n.Input(0, nd(llUs, ipv6.AllNodes()), emitNA(ndp.NeighborAdvert{Override: true, Target: llUs, Options: tlla(macPeer)}, llUs, ipv6.AllNodes()), rec)
		Expect(n.Disabled()).To(BeTrue())
		Expect(rec.eventsOf(ndp.EventInterfaceDisabled)).To(HaveLen(1))
		Expect(n.Stats().InterfaceDisabled).To(Equal(uint64(1)))
	})

	It("counts an advertisement for an assigned address as a conflict (5.4.4)", func() {
		n, rec = upNode(quiet())
		n.Input(0, nd(llUs, ipv6.AllNodes()), emitNA(ndp.NeighborAdvert{Override: true, Target: llUs, Options: tlla(macPeer)}, llUs, ipv6.AllNodes()), rec)
		Expect(addrState(n, llUs)).To(Equal(ndp.AddrPreferred))
		Expect(n.Stats().RxAddrConflicts).To(Equal(uint64(1)))
	})

	It("runs DAD on static addresses too and makes their prefix on-link (5.4)", func() {
		n, rec = upNode(quiet())
		Expect(n.AddStatic(0, gUs, 64, rec)).To(Succeed())
		Expect(n.IsAssigned(gUs)).To(BeFalse())
		run(n, rec, 0, 2*time.Second)
		Expect(rec.of(icmpv6.TypeNeighborSolicitation)).To(HaveLen(1))
		Expect(n.IsAssigned(gUs)).To(BeTrue())
		Expect(n.OnLink(gPeer)).To(BeTrue())
		Expect(n.AddStatic(0, gUs, 64, rec)).To(MatchError(ContainSubstring("already configured")))
		Expect(n.AddStatic(0, gUs, 129, rec)).To(MatchError(ContainSubstring("prefix length 129")))
		Expect(n.AddStatic(0, ipv6.AllNodes(), 64, rec)).To(MatchError(ContainSubstring("not a unicast")))
	})

	It("skips DAD when DupAddrDetectTransmits is 0 (5.1)", func() {
		cfg := quiet()
		cfg.DupAddrDetectTransmits = 0
		start(cfg)
		Expect(n.IsAssigned(llUs)).To(BeTrue())
		run(n, rec, 0, 5*time.Second)
		Expect(rec.of(icmpv6.TypeNeighborSolicitation)).To(BeEmpty())
	})

	Describe("SLAAC (5.5.3)", func() {
		BeforeEach(func() { n, rec = upNode(quiet()) })

		It("forms prefix + interface identifier from an A=1 /64 prefix, through DAD", func() {
			ra(n, rec, 0, slaacPrefix(7200, 3600))
			Expect(addrState(n, ourSLAAC)).To(Equal(ndp.AddrTentative))
			run(n, rec, 0, 2*time.Second)
			Expect(addrState(n, ourSLAAC)).To(Equal(ndp.AddrPreferred))
			Expect(n.Stats().SLAACAddresses).To(Equal(uint64(1)))
			Expect(n.OnLink(gPeer)).To(BeTrue(), "L=1")
		})

		DescribeTable("ignores", func(pi ndp.PrefixInfo, counter func(ndp.Stats) uint64) {
			ra(n, rec, 0, ndp.RouterAdvert{Options: ndp.Options{Prefixes: []ndp.PrefixInfo{pi}}})
			Expect(n.Addresses(nil)).To(HaveLen(1), "only the link-local address")
			Expect(counter(n.Stats())).To(Equal(uint64(1)))
		},
			Entry("a prefix whose length is not 64 (d)", ndp.PrefixInfo{PrefixLen: 48, Autonomous: true, ValidLifetime: 7200, PreferredLifetime: 3600, Prefix: gPrefix}, func(s ndp.Stats) uint64 { return s.RxPrefixesNotAutoconf }),
			Entry("a preferred lifetime above the valid one (c)", ndp.PrefixInfo{PrefixLen: 64, Autonomous: true, ValidLifetime: 3600, PreferredLifetime: 7200, Prefix: gPrefix}, func(s ndp.Stats) uint64 { return s.RxPrefixesIgnored }),
			Entry("the link-local prefix (b)", ndp.PrefixInfo{PrefixLen: 64, Autonomous: true, OnLink: true, ValidLifetime: 7200, PreferredLifetime: 3600, Prefix: mustAddr("fe80::")}, func(s ndp.Stats) uint64 { return s.RxPrefixesIgnored }),
		)

		It("deprecates at the end of the preferred lifetime and removes at the end of the valid one (5.5.4)", func() {
			ra(n, rec, 0, slaacPrefix(7200, 3600))
			run(n, rec, 0, time.Hour-1)
			Expect(addrState(n, ourSLAAC)).To(Equal(ndp.AddrPreferred))
			run(n, rec, time.Hour-1, time.Hour)
			Expect(addrState(n, ourSLAAC)).To(Equal(ndp.AddrDeprecated))
			Expect(n.IsAssigned(ourSLAAC)).To(BeTrue(), "still valid")
			run(n, rec, time.Hour, 2*time.Hour)
			Expect(addrState(n, ourSLAAC)).To(BeZero())
			Expect(n.Groups(nil)).To(ContainElement(ourSLAAC.SolicitedNode()), "still the link-local address's group: joins are counted")
			Expect(rec.eventsOf(ndp.EventAddressDeprecated)).To(HaveLen(1))
			Expect(rec.eventsOf(ndp.EventAddressRemoved)).To(HaveLen(1))
		})

		DescribeTable("updates the valid lifetime by the two-hour rule (e)",
			func(first uint32, after time.Duration, received uint32, wantRemaining time.Duration) {
				ra(n, rec, 0, slaacPrefix(first, 0))
				ra(n, rec, after, slaacPrefix(received, 0))
				var info ndp.AddrInfo
				for _, a := range n.Addresses(nil) {
					if a.Addr == ourSLAAC {
						info = a
					}
				}
				Expect(info.ValidUntil - after).To(Equal(wantRemaining))
			},
			Entry("received above two hours: taken", uint32(3600), time.Duration(0), uint32(3*3600), 3*time.Hour),
			Entry("received above the remaining: taken", uint32(3600), 30*time.Minute, uint32(3000), 3000*time.Second),
			Entry("remaining two hours or less: ignored", uint32(3600), time.Duration(0), uint32(600), time.Hour),
			Entry("otherwise: two hours", uint32(10*3600), time.Duration(0), uint32(600), 2*time.Hour),
			Entry("a zero lifetime cannot kill it at once: two hours", uint32(10*3600), time.Duration(0), uint32(0), 2*time.Hour),
		)
	})
})
