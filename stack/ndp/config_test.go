package ndp_test

import (
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ndp"
)

var _ = Describe("Config", func() {
	It("has RFC 4861 section 10's and RFC 3810 section 9's values", func() {
		c := ndp.DefaultConfig()
		Expect(c.MaxMulticastSolicit).To(Equal(3))
		Expect(c.MaxUnicastSolicit).To(Equal(3))
		Expect(c.RetransTimer).To(Equal(time.Second))
		Expect(c.DelayFirstProbeTime).To(Equal(5 * time.Second))
		Expect(c.BaseReachableTime).To(Equal(30 * time.Second))
		Expect(c.MaxRtrSolicitations).To(Equal(3))
		Expect(c.RtrSolicitationInterval).To(Equal(4 * time.Second))
		Expect(c.MaxRtrSolicitationDelay).To(Equal(time.Second))
		Expect(c.DupAddrDetectTransmits).To(Equal(1))
		Expect(c.Robustness).To(Equal(2))
		Expect(c.UnsolicitedReportInterval).To(Equal(time.Second))
		Expect(c.Validate()).To(Succeed())
	})
	DescribeTable("refuses, naming the key", func(mutate func(*ndp.Config), key string) {
		c := ndp.DefaultConfig()
		mutate(&c)
		Expect(c.Validate()).To(MatchError(HavePrefix(key + ":")))
		_, err := ndp.NewNode(c, macUs, rand.NewPCG(1, 2))
		Expect(err).To(MatchError(ContainSubstring(key)))
	},
		Entry(nil, func(c *ndp.Config) { c.RetransTimer = 0 }, "retrans_timer"),
		Entry(nil, func(c *ndp.Config) { c.BaseReachableTime = -1 }, "base_reachable_time"),
		Entry(nil, func(c *ndp.Config) { c.MaxMulticastSolicit = 0 }, "max_multicast_solicit"),
		Entry(nil, func(c *ndp.Config) { c.LinkMTU = 1000 }, "link_mtu"),
		Entry(nil, func(c *ndp.Config) { c.Robustness = 0 }, "robustness"),
		Entry(nil, func(c *ndp.Config) { c.MaxRtrSolicitationDelay = -1 }, "max_rtr_solicitation_delay"),
		Entry(nil, func(c *ndp.Config) { c.PendingPerDest = 0 }, "pending_per_dest"),
	)
	It("needs a random source and a unicast MAC", func() {
		_, err := ndp.NewNode(ndp.DefaultConfig(), macUs, nil)
		Expect(err).To(MatchError(ContainSubstring("random source")))
		_, err = ndp.NewNode(ndp.DefaultConfig(), ether.BroadcastAddr(), rand.NewPCG(1, 2))
		Expect(err).To(MatchError(ContainSubstring("not a unicast")))
	})
})

var _ = Describe("Determinism", func() {
	// transcript runs a start-up with every random delay on, a router,
	// a resolution and a query, and returns what was sent and when.
	transcript := func(seed uint64) []sent {
		n := newNode(ndp.DefaultConfig(), seed)
		rec := &recorder{}
		Expect(n.Start(0, rec)).To(Succeed())
		run(n, rec, 0, 3*time.Second)
		ra(n, rec, 3*time.Second, slaacPrefix(7200, 3600))
		n.Resolve(3*time.Second, gPeer, &hw.Mbuf{}, rec)
		run(n, rec, 3*time.Second, time.Minute)
		return rec.msgs
	}
	It("sends the same messages at the same times for the same seed", func() {
		a, b := transcript(42), transcript(42)
		Expect(a).To(Equal(b))
		Expect(len(a)).To(BeNumerically(">", 5))
		Expect(transcript(43)).NotTo(Equal(a), "the seed matters")
	})
})
