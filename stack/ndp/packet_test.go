package ndp_test

import (
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

var _ = Describe("Messages (RFC 4861 section 4)", func() {
	pi := ndp.PrefixInfo{PrefixLen: 64, OnLink: true, Autonomous: true, ValidLifetime: 86400, PreferredLifetime: 14400, Prefix: gPrefix}

	It("round-trips every message with its options (sections 4.1 to 4.6)", func() {
		rs := ndp.RouterSolicit{Options: slla(macUs)}
		b := make([]byte, rs.Len())
		rs.Emit(b, llUs, ipv6.AllRouters())
		Expect(b).To(HaveLen(16))
		gotRS, err := ndp.ParseRouterSolicit(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(gotRS).To(Equal(rs))

		adv := ndp.RouterAdvert{CurHopLimit: 64, Managed: true, Other: true, RouterLifetime: 1800, ReachableTime: 30000, RetransTimer: 1000,
			Options: ndp.Options{SourceLinkAddr: macRouter, HasSourceLinkAddr: true, MTU: 1400, HasMTU: true, Prefixes: []ndp.PrefixInfo{pi}}}
		b = emitRA(adv, llRouter, ipv6.AllNodes())
		Expect(b).To(HaveLen(16 + 8 + 8 + 32))
		gotRA, err := ndp.ParseRouterAdvert(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(gotRA).To(Equal(adv))

		ns := ndp.NeighborSolicit{Target: gPeer, Options: slla(macUs)}
		gotNS, err := ndp.ParseNeighborSolicit(emitNS(ns, gUs, gPeer.SolicitedNode()))
		Expect(err).NotTo(HaveOccurred())
		Expect(gotNS).To(Equal(ns))

		na := ndp.NeighborAdvert{Router: true, Solicited: true, Override: true, Target: gPeer, Options: tlla(macPeer)}
		gotNA, err := ndp.ParseNeighborAdvert(emitNA(na, gPeer, gUs))
		Expect(err).NotTo(HaveOccurred())
		Expect(gotNA).To(Equal(na))

		rd := ndp.Redirect{Target: llPeer, Destination: farAway, Options: tlla(macPeer)}
		b = make([]byte, rd.Len())
		rd.Emit(b, llRouter, llUs)
		gotRD, err := ndp.ParseRedirect(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(gotRD).To(Equal(rd))
	})

	It("agrees with gopacket's decoders", func() {
		adv := ndp.RouterAdvert{CurHopLimit: 64, Managed: true, RouterLifetime: 1800, ReachableTime: 30000, RetransTimer: 1000,
			Options: ndp.Options{SourceLinkAddr: macRouter, HasSourceLinkAddr: true, Prefixes: []ndp.PrefixInfo{pi}}}
		pkt := gopacket.NewPacket(emitRA(adv, llRouter, ipv6.AllNodes()), layers.LayerTypeICMPv6, gopacket.Default)
		l := pkt.Layer(layers.LayerTypeICMPv6RouterAdvertisement)
		Expect(l).NotTo(BeNil(), "%v", pkt.ErrorLayer())
		g := l.(*layers.ICMPv6RouterAdvertisement)
		Expect(g.HopLimit).To(Equal(uint8(64)))
		Expect(g.ManagedAddressConfig()).To(BeTrue())
		Expect(g.OtherConfig()).To(BeFalse())
		Expect(g.RouterLifetime).To(Equal(uint16(1800)))
		Expect(g.ReachableTime).To(Equal(uint32(30000)))
		Expect(g.RetransTimer).To(Equal(uint32(1000)))
		Expect(g.Options).To(HaveLen(2))
		Expect(g.Options[0].Type).To(Equal(layers.ICMPv6OptSourceAddress))
		Expect(g.Options[0].Data).To(Equal(macRouter[:]))
		Expect(g.Options[1].Type).To(Equal(layers.ICMPv6OptPrefixInfo))

		// And gopacket's Neighbor Advertisement parses here.
		buf := gopacket.NewSerializeBuffer()
		Expect(gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &layers.ICMPv6NeighborAdvertisement{
			Flags: 0x60, TargetAddress: net.IP(gPeer[:]),
			Options: layers.ICMPv6Options{{Type: layers.ICMPv6OptTargetAddress, Data: macPeer[:]}},
		})).To(Succeed())
		msg := append([]byte{uint8(icmpv6.TypeNeighborAdvertisement), 0, 0, 0}, buf.Bytes()...)
		na, err := ndp.ParseNeighborAdvert(msg)
		Expect(err).NotTo(HaveOccurred())
		Expect(na).To(Equal(ndp.NeighborAdvert{Solicited: true, Override: true, Target: gPeer, Options: tlla(macPeer)}))
	})

	Describe("options (section 4.6)", func() {
		ns := func(opts ...[]byte) []byte {
			b := emitNS(ndp.NeighborSolicit{Target: gUs}, gPeer, gUs)
			for _, o := range opts {
				b = append(b, o...)
			}
			return b
		}
		It("skips options it does not know and goes on", func() {
			r, err := ndp.ParseNeighborSolicit(ns([]byte{200, 1, 0, 0, 0, 0, 0, 0}, []byte{1, 1, 2, 0, 0, 0, 0, 2}))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Options.Unknown).To(Equal(1))
			Expect(r.Options.HasSourceLinkAddr).To(BeTrue())
			Expect(r.Options.SourceLinkAddr).To(Equal(macPeer))
		})
		DescribeTable("rejects", func(opt []byte, want ndp.Error) {
			_, err := ndp.ParseNeighborSolicit(ns(opt))
			Expect(err).To(Equal(want))
			Expect(want.Name()).NotTo(Equal("unknown"))
		},
			Entry("an option of length zero: discard the packet", []byte{200, 0, 0, 0, 0, 0, 0, 0}, ndp.ErrOptionLength),
			Entry("an option past the end", []byte{1, 2, 0, 0, 0, 0, 0, 0}, ndp.ErrTruncated),
			Entry("a lone type byte", []byte{1}, ndp.ErrTruncated),
			Entry("a link-layer address option that is not 8 bytes (RFC 2464 section 6)", []byte{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ndp.ErrBadOption),
			Entry("an MTU option that is not 8 bytes", []byte{5, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ndp.ErrBadOption),
			Entry("a prefix option that is not 32 bytes", []byte{3, 1, 0, 0, 0, 0, 0, 0}, ndp.ErrBadOption),
		)
	})

	DescribeTable("rejects a message shorter than its fixed part", func(b []byte, parse func([]byte) error) {
		Expect(parse(b)).To(Equal(ndp.ErrTruncated))
	},
		Entry("RS, 8 octets", []byte{133, 0, 0, 0, 0, 0, 0}, func(b []byte) error { _, err := ndp.ParseRouterSolicit(b); return err }),
		Entry("RA, 16 octets", make([]byte, 15), func(b []byte) error { _, err := ndp.ParseRouterAdvert(b); return err }),
		Entry("NS, 24 octets", make([]byte, 23), func(b []byte) error { _, err := ndp.ParseNeighborSolicit(b); return err }),
		Entry("NA, 24 octets", make([]byte, 23), func(b []byte) error { _, err := ndp.ParseNeighborAdvert(b); return err }),
		Entry("Redirect, 40 octets", make([]byte, 39), func(b []byte) error { _, err := ndp.ParseRedirect(b); return err }),
	)
})
