package iface_test

import (
	"net/netip"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

var _ = Describe("IPv6 output through a default router configured by hand (ndp.Config.DefaultRouter; RFC 4861 sections 5.2, 7.2.2)", func() {
	macR := ether.Addr{0x02, 0, 0, 0, 0, 0xfe}
	router := mustAddr6("fe80::1")
	far := mustAddr6("2001:db8::5")
	up := func(gw string) *node {
		nd := ndp.DefaultConfig()
		nd.DupAddrDetectTransmits, nd.MaxRtrSolicitations, nd.MaxRtrSolicitationDelay = 0, 0, 0
		if gw != "" {
			nd.DefaultRouter = netip.MustParseAddr(gw)
		}
		n := newNode(iface.Config{MAC: macA.String(), IPv6: iface.IPv6Config{Address: "fd00::1/64", ND: nd, NDSet: true}})
		n.ifc.Start(0)
		n.ifc.Poll(0)
		n.link.take()
		return n
	}

	It("sends a packet for an off-link address to the router's MAC, resolved by Neighbor Discovery", func() {
		n := up("fe80::1")
		defer n.ifc.Close()
		now := time.Second
		sol := tcpSeg6(n, now, far)
		Expect(sol).To(HaveLen(1), "the segment is held: only the solicitation goes out")
		Expect(ether.Frame(sol[0]).Dst()).To(Equal(ether.Addr(router.SolicitedNode().MulticastMAC())), "to the router's solicited-node group")
		e, ok := n.ifc.NDP().Neighbor(router)
		Expect(ok).To(BeTrue(), "an entry for the router, not for %v", far)
		Expect(e.State).To(Equal(ndp.Incomplete))
		_, ok = n.ifc.NDP().Neighbor(far)
		Expect(ok).To(BeFalse(), "never solicited: it is off-link")

		n.deliver(now, naFrame(router, ip6A, macR, macA, true))
		out := n.link.take()
		Expect(out).To(HaveLen(1), "the held segment")
		f := ether.Frame(out[0])
		Expect(f.Dst()).To(Equal(macR))
		p := ipv6.Packet(out[0][ether.HeaderLen:])
		Expect(p.Dst()).To(Equal(far), "the IPv6 destination is unchanged")
		Expect(p.Src()).To(Equal(ip6A))

		f2 := tcpSeg6(n, now+time.Millisecond, far)
		Expect(f2).To(HaveLen(1))
		Expect(ether.Frame(f2[0]).Dst()).To(Equal(macR), "resolved: sent at once")
		Expect(n.ifc.NDP().Routers(nil)).To(Equal([]ndp.RouterInfo{{Addr: router, Expires: ndp.Never, Static: true}}))
	})

	It("solicits the router, not the destination", func() {
		n := up("fe80::1")
		defer n.ifc.Close()
		m := n.ifc.AllocTransport6()
		_, _ = m.Append(20)
		Expect(n.ifc.OutputIPv6(time.Second, m, far, ipv6.NextTCP, iface.OutputOptions6{})).To(Succeed())
		frames := n.link.take()
		var targets []ipv6.Addr
		for _, fr := range frames {
			p := ipv6.Packet(fr[ether.HeaderLen:])
			msg := fr[ether.HeaderLen+ipv6.HeaderLen:]
			if p.NextHeader() == ipv6.NextICMPv6 && icmpv6.Type(msg[0]) == icmpv6.TypeNeighborSolicitation {
				ns, err := ndp.ParseNeighborSolicit(msg)
				Expect(err).NotTo(HaveOccurred())
				targets = append(targets, ns.Target)
			}
		}
		Expect(targets).To(Equal([]ipv6.Addr{router}))
		Expect(n.ifc.Stats6().NDP.TxNeighborSolicits).To(Equal(uint64(1)))
	})

	It("has no route to an off-link address without one", func() {
		n := up("")
		defer n.ifc.Close()
		m := n.ifc.AllocTransport6()
		_, _ = m.Append(20)
		Expect(n.ifc.OutputIPv6(time.Second, m, far, ipv6.NextTCP, iface.OutputOptions6{})).To(MatchError(iface.ErrNoRoute))
		Expect(n.ifc.Stats6().Out.NoRoutes).To(Equal(uint64(1)))
	})
})
