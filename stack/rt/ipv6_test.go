package rt_test

import (
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/rt"
)

// states maps each of r's IPv6 addresses to its DAD state.
func states(r *rt.Runtime) map[string]string {
	out := map[string]string{}
	for _, a := range r.Addrs6() {
		out[a.Prefix().String()] = a.State
	}
	return out
}

var _ = Describe("a runtime with IPv6", func() {
	It("forms its link-local address from the MAC and runs DAD on both addresses with the lcore's clock", func() {
		p, err := livetest.NewRingPairWith(livetest.RingPairConfig{A4: "10.9.0.1/24", A6: "fd09::1/64", B6: "fd09::2/64", FastDAD: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Stop)
		Expect(p.A.HasIPv4()).To(BeTrue())
		Expect(p.A.HasIPv6()).To(BeTrue())
		Expect(p.B.HasIPv4()).To(BeFalse(), "B is IPv6-only")
		Expect(netip.AddrFrom16(p.A.Addr6())).To(Equal(netip.MustParseAddr("fd09::1")))
		// RFC 4291 section 2.5.6 and appendix A: fe80::/64 and the
		// modified EUI-64 of the MAC (universal/local bit inverted,
		// ff:fe in the middle).
		mac := p.PA.MACAddr()
		ll := netip.AddrFrom16(p.A.LinkLocal6()).As16()
		Expect(ll[:8]).To(Equal([]byte{0xfe, 0x80, 0, 0, 0, 0, 0, 0}))
		Expect(ll[8:]).To(Equal([]byte{mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]}))

		llB := netip.AddrFrom16(p.B.LinkLocal6()).String() + "/64"
		Eventually(func() map[string]string { return states(p.B) }).WithTimeout(10 * time.Second).WithPolling(5 * time.Millisecond).
			Should(Equal(map[string]string{"fd09::2/64": "preferred", llB: "preferred"}))
		s := p.B.Snapshot().Lcores[0]
		Expect(s.Iface6).NotTo(BeNil())
		Expect(s.Iface6.NDP.DADSucceeded).To(BeEquivalentTo(2))
		Expect(s.Iface6.NDP.TxDADSolicits).To(BeEquivalentTo(2))
		Expect(s.Iface6.NDP.TxReports).To(BeNumerically(">=", 1), "MLDv2 reports for the solicited-node groups (RFC 3810)")
		Expect(s.Addrs6).To(HaveLen(2))
	})

	It("finds a duplicate when a stack claims an address another on the link holds: the holder answers, keeps it, and each keeps its link-local one", func() {
		p, err := livetest.NewRingPairWith(livetest.RingPairConfig{A6: "fd09::5/64", B6: "fd09::5/64", FastDAD: true, AFirst: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Stop)
		llA := netip.AddrFrom16(p.A.LinkLocal6()).String() + "/64"
		llB := netip.AddrFrom16(p.B.LinkLocal6()).String() + "/64"
		// RFC 4861 section 7.2.4: the holder answers B's DAD
		// solicitation (from ::) with an advertisement to all-nodes, and
		// RFC 4862 section 5.4.4 makes B's tentative address a duplicate.
		Eventually(func() map[string]string { return states(p.B) }).WithTimeout(10 * time.Second).WithPolling(5 * time.Millisecond).
			Should(Equal(map[string]string{"fd09::5/64": "duplicate", llB: "preferred"}))
		Expect(states(p.A)).To(Equal(map[string]string{"fd09::5/64": "preferred", llA: "preferred"}))
		Expect(p.B.Snapshot().Lcores[0].Iface6.NDP.DADDuplicates).To(BeEquivalentTo(1))
		a := p.A.Snapshot().Lcores[0].Iface6.NDP
		Expect(a.DADDuplicates).To(BeZero())
		Expect(a.TxNeighborAdverts).To(BeNumerically(">=", 1))
	})

	It("has no IPv6 side without an IPv6 address", func() {
		p, err := livetest.NewRingPair(1, 1)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Stop)
		Expect(p.A.HasIPv6()).To(BeFalse())
		Expect(p.A.Addrs6()).To(BeNil())
		Expect(p.A.Snapshot().Lcores[0].Iface6).To(BeNil(), "an IPv4-only runtime's JSON is as before (omitempty)")
	})
})
