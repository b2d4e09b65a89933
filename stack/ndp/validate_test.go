package ndp_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// fixup returns a copy of a mutated message with its checksum
// recomputed for ip, so that the rule under test is the one that fails.
func fixup(b []byte, ip ndp.IPInfo) []byte {
	c := append([]byte(nil), b...)
	fill(c, ip)
	return c
}

var _ = Describe("Validation (RFC 4861 sections 6.1.1, 6.1.2, 7.1.1, 7.1.2, 8.1)", func() {
	type msgCase struct {
		ip  ndp.IPInfo
		msg []byte
	}
	rsOK := func() msgCase {
		rs := ndp.RouterSolicit{Options: slla(macPeer)}
		b := make([]byte, rs.Len())
		rs.Emit(b, llPeer, ipv6.AllRouters())
		return msgCase{nd(llPeer, ipv6.AllRouters()), b}
	}
	raOK := func() msgCase {
		r := ndp.RouterAdvert{RouterLifetime: 1800, Options: slla(macRouter)}
		return msgCase{nd(llRouter, ipv6.AllNodes()), emitRA(r, llRouter, ipv6.AllNodes())}
	}
	nsOK := func() msgCase {
		return msgCase{nd(llPeer, llUs.SolicitedNode()), emitNS(ndp.NeighborSolicit{Target: llUs, Options: slla(macPeer)}, llPeer, llUs.SolicitedNode())}
	}
	naOK := func() msgCase {
		return msgCase{nd(llPeer, llUs), emitNA(ndp.NeighborAdvert{Solicited: true, Target: llPeer, Options: tlla(macPeer)}, llPeer, llUs)}
	}
	rdOK := func() msgCase {
		rd := ndp.Redirect{Target: llPeer, Destination: farAway}
		b := make([]byte, rd.Len())
		rd.Emit(b, llRouter, llUs)
		return msgCase{nd(llRouter, llUs), b}
	}
	validate := map[string]func(ndp.IPInfo, []byte) error{
		"rs": func(ip ndp.IPInfo, b []byte) error { _, err := ndp.ValidateRouterSolicit(ip, b); return err },
		"ra": func(ip ndp.IPInfo, b []byte) error { _, err := ndp.ValidateRouterAdvert(ip, b); return err },
		"ns": func(ip ndp.IPInfo, b []byte) error { _, err := ndp.ValidateNeighborSolicit(ip, b); return err },
		"na": func(ip ndp.IPInfo, b []byte) error { _, err := ndp.ValidateNeighborAdvert(ip, b); return err },
		"rd": func(ip ndp.IPInfo, b []byte) error { _, err := ndp.ValidateRedirect(ip, b); return err },
	}
	base := map[string]func() msgCase{"rs": rsOK, "ra": raOK, "ns": nsOK, "na": naOK, "rd": rdOK}

	It("accepts the valid messages", func() {
		for k, f := range base {
			c := f()
			Expect(validate[k](c.ip, c.msg)).To(Succeed(), k)
		}
	})

	DescribeTable("drops, counting by reason", func(kind string, mutate func(c *msgCase), want ndp.Error, counter func(ndp.Stats) uint64) {
		c := base[kind]()
		mutate(&c)
		Expect(validate[kind](c.ip, c.msg)).To(Equal(want))
		n, rec := upNode(quiet())
		n.Input(0, c.ip, c.msg, rec)
		Expect(counter(n.Stats())).To(Equal(uint64(1)))
		Expect(rec.msgs).To(BeEmpty())
	},
		// The rules every ND message shares.
		Entry("RS: hop limit not 255 (6.1.1)", "rs", func(c *msgCase) { c.ip.HopLimit = 254 }, ndp.ErrHopLimit, func(s ndp.Stats) uint64 { return s.RxBadHopLimit }),
		Entry("RA: hop limit not 255 (6.1.2)", "ra", func(c *msgCase) { c.ip.HopLimit = 64 }, ndp.ErrHopLimit, func(s ndp.Stats) uint64 { return s.RxBadHopLimit }),
		Entry("NS: hop limit not 255 (7.1.1)", "ns", func(c *msgCase) { c.ip.HopLimit = 1 }, ndp.ErrHopLimit, func(s ndp.Stats) uint64 { return s.RxBadHopLimit }),
		Entry("NA: hop limit not 255 (7.1.2)", "na", func(c *msgCase) { c.ip.HopLimit = 254 }, ndp.ErrHopLimit, func(s ndp.Stats) uint64 { return s.RxBadHopLimit }),
		Entry("Redirect: hop limit not 255 (8.1)", "rd", func(c *msgCase) { c.ip.HopLimit = 254 }, ndp.ErrHopLimit, func(s ndp.Stats) uint64 { return s.RxBadHopLimit }),
		Entry("NS: bad checksum", "ns", func(c *msgCase) { c.msg[2] ^= 1 }, ndp.ErrChecksum, func(s ndp.Stats) uint64 { return s.RxBadChecksum }),
		Entry("NA: code not 0", "na", func(c *msgCase) { c.msg[1] = 1; c.msg = fixup(c.msg, c.ip) }, ndp.ErrCode, func(s ndp.Stats) uint64 { return s.RxBadCode }),
		Entry("RA: code not 0", "ra", func(c *msgCase) { c.msg[1] = 9; c.msg = fixup(c.msg, c.ip) }, ndp.ErrCode, func(s ndp.Stats) uint64 { return s.RxBadCode }),
		Entry("NS: ICMP length below 24", "ns", func(c *msgCase) { c.msg = fixup(c.msg[:20], c.ip) }, ndp.ErrTruncated, func(s ndp.Stats) uint64 { return s.RxTruncated }),
		Entry("RA: an option of length zero", "ra", func(c *msgCase) { c.msg[17] = 0; c.msg = fixup(c.msg, c.ip) }, ndp.ErrOptionLength, func(s ndp.Stats) uint64 { return s.RxZeroLengthOption }),
		// Per message.
		Entry("RS: source link-layer option from :: (6.1.1)", "rs", func(c *msgCase) { c.ip.Src = ipv6.Addr{}; c.msg = fixup(c.msg, c.ip) }, ndp.ErrUnspecifiedWithLinkAddr, func(s ndp.Stats) uint64 { return s.RxUnspecifiedWithLinkAddr }),
		Entry("RA: source not link-local (6.1.2)", "ra", func(c *msgCase) { c.ip.Src = gPeer; c.msg = fixup(c.msg, c.ip) }, ndp.ErrSourceNotLinkLocal, func(s ndp.Stats) uint64 { return s.RxSourceNotLinkLocal }),
		Entry("NS: multicast target (7.1.1)", "ns", func(c *msgCase) { copy(c.msg[8:24], ipv6.AllNodes().Netip().AsSlice()); c.msg = fixup(c.msg, c.ip) }, ndp.ErrTargetMulticast, func(s ndp.Stats) uint64 { return s.RxTargetMulticast }),
		Entry("NS: from :: not to a solicited-node group (7.1.1)", "ns", func(c *msgCase) {
			c.ip = nd(ipv6.Addr{}, llUs)
			c.msg = emitNS(ndp.NeighborSolicit{Target: llUs}, c.ip.Src, c.ip.Dst)
		}, ndp.ErrDADDestination, func(s ndp.Stats) uint64 { return s.RxDADDestination }),
		Entry("NS: source link-layer option from :: (7.1.1)", "ns", func(c *msgCase) { c.ip.Src = ipv6.Addr{}; c.msg = fixup(c.msg, c.ip) }, ndp.ErrUnspecifiedWithLinkAddr, func(s ndp.Stats) uint64 { return s.RxUnspecifiedWithLinkAddr }),
		Entry("NA: multicast target (7.1.2)", "na", func(c *msgCase) { c.msg[8] = 0xff; c.msg = fixup(c.msg, c.ip) }, ndp.ErrTargetMulticast, func(s ndp.Stats) uint64 { return s.RxTargetMulticast }),
		Entry("NA: Solicited to a multicast destination (7.1.2)", "na", func(c *msgCase) { c.ip.Dst = ipv6.AllNodes(); c.msg = fixup(c.msg, c.ip) }, ndp.ErrSolicitedMulticast, func(s ndp.Stats) uint64 { return s.RxSolicitedToMulticast }),
		Entry("Redirect: source not link-local (8.1)", "rd", func(c *msgCase) { c.ip.Src = gPeer; c.msg = fixup(c.msg, c.ip) }, ndp.ErrSourceNotLinkLocal, func(s ndp.Stats) uint64 { return s.RxSourceNotLinkLocal }),
		Entry("Redirect: multicast destination (8.1)", "rd", func(c *msgCase) { c.msg[24] = 0xff; c.msg = fixup(c.msg, c.ip) }, ndp.ErrRedirectDestination, func(s ndp.Stats) uint64 { return s.RxRedirectDestinationMulticast }),
		Entry("Redirect: target neither link-local nor the destination (8.1)", "rd", func(c *msgCase) { copy(c.msg[8:24], gPeer[:]); c.msg = fixup(c.msg, c.ip) }, ndp.ErrRedirectTarget, func(s ndp.Stats) uint64 { return s.RxRedirectBadTarget }),
	)

	It("counts a message of another type", func() {
		n, rec := upNode(quiet())
		n.Input(0, nd(llPeer, llUs), []byte{128, 0, 0, 0, 0, 0, 0, 0}, rec)
		n.Input(0, nd(llPeer, llUs), []byte{128, 0}, rec)
		Expect(n.Stats().RxBadType).To(Equal(uint64(1)))
		Expect(n.Stats().RxTruncated).To(Equal(uint64(1)))
	})
})
