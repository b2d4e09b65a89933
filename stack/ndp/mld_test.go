package ndp_test

import (
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

func mldIP(src, dst ipv6.Addr) ndp.IPInfo {
	return ndp.IPInfo{Src: src, Dst: dst, HopLimit: 1, RouterAlert: true}
}

// records returns the records of the MLDv2 reports sent, in order.
func records(rec *recorder) []ndp.AddressRecord {
	var out []ndp.AddressRecord
	for _, s := range rec.of(icmpv6.TypeMLDv2Report) {
		r, err := ndp.ParseReport(s.out.Msg)
		Expect(err).NotTo(HaveOccurred())
		out = append(out, r.Records...)
	}
	return out
}

var _ = Describe("MLD messages (RFC 3810 section 5)", func() {
	It("tells the query's version by its length (8.1)", func() {
		v1 := emitQuery(ndp.Query{Version: 1, MaxRespDelay: 10 * time.Second}, llRouter, ipv6.AllNodes())
		Expect(v1).To(HaveLen(24))
		q, err := ndp.ParseQuery(v1)
		Expect(err).NotTo(HaveOccurred())
		Expect(q.Version).To(Equal(1))
		Expect(q.MaxRespDelay).To(Equal(10 * time.Second))

		v2 := emitQuery(ndp.Query{Version: 2, MaxRespDelay: 10 * time.Second, QRV: 2, QQI: 125 * time.Second}, llRouter, ipv6.AllNodes())
		Expect(v2).To(HaveLen(28))
		q, err = ndp.ParseQuery(v2)
		Expect(err).NotTo(HaveOccurred())
		Expect(q.Version).To(Equal(2))
		Expect(q.QRV).To(Equal(uint8(2)))
		Expect(q.QQI).To(Equal(125 * time.Second))

		_, err = ndp.ParseQuery(append(v1, 0, 0))
		Expect(err).To(Equal(ndp.ErrQueryLength), "26 octets: ignored")
		_, err = ndp.ParseQuery(append(v2, 0, 0, 0, 0))
		Expect(err).NotTo(HaveOccurred(), "additional data after the sources is ignored (5.1.12)")
		v2[27] = 1
		_, err = ndp.ParseQuery(v2)
		Expect(err).To(Equal(ndp.ErrTruncated), "a source announced but missing")
	})

	DescribeTable("decodes Maximum Response Code (5.1.3) and QQIC (5.1.9)", func(code uint16, qqic uint8, delay, qqi time.Duration) {
		b := emitQuery(ndp.Query{Version: 2}, llRouter, ipv6.AllNodes())
		b[4], b[5], b[25] = byte(code>>8), byte(code), qqic
		q, err := ndp.ParseQuery(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(q.MaxRespDelay).To(Equal(delay))
		Expect(q.QQI).To(Equal(qqi))
		// And back.
		back := emitQuery(q, llRouter, ipv6.AllNodes())
		Expect(back[4:6]).To(Equal(b[4:6]))
		Expect(back[25]).To(Equal(b[25]))
	},
		Entry("linear", uint16(10000), uint8(125), 10*time.Second, 125*time.Second),
		Entry("exponential: 0x8000 is 32768 ms, 0x80 is 128 s", uint16(0x8000), uint8(0x80), 32768*time.Millisecond, 128*time.Second),
		Entry("exponential, largest", uint16(0xffff), uint8(0xff), time.Duration(0x1fff<<10)*time.Millisecond, time.Duration(0x1f<<10)*time.Second),
	)

	DescribeTable("drops a query on the checks of 6.2, counting by reason", func(ip ndp.IPInfo, want ndp.Error, counter func(ndp.Stats) uint64) {
		msg := emitQuery(ndp.Query{Version: 2, MaxRespDelay: time.Second}, ip.Src, ip.Dst)
		_, err := ndp.ValidateQuery(ip, msg)
		Expect(err).To(Equal(want))
		n, rec := upNode(quiet())
		n.Input(0, ip, msg, rec)
		Expect(counter(n.Stats())).To(Equal(uint64(1)))
		run(n, rec, 0, 5*time.Second)
		Expect(rec.msgs).To(BeEmpty())
	},
		Entry("source not link-local", mldIP(gPeer, ipv6.AllNodes()), ndp.ErrSourceNotLinkLocal, func(s ndp.Stats) uint64 { return s.RxSourceNotLinkLocal }),
		Entry("hop limit not 1", ndp.IPInfo{Src: llRouter, Dst: ipv6.AllNodes(), HopLimit: 2, RouterAlert: true}, ndp.ErrHopLimit, func(s ndp.Stats) uint64 { return s.RxBadHopLimit }),
		Entry("no Router Alert", ndp.IPInfo{Src: llRouter, Dst: ipv6.AllNodes(), HopLimit: 1}, ndp.ErrNoRouterAlert, func(s ndp.Stats) uint64 { return s.RxNoRouterAlert }),
	)

	It("builds reports gopacket decodes, with the Router Alert header the IPv6 layer adds", func() {
		r := ndp.Report{Records: []ndp.AddressRecord{
			{Type: ndp.ChangeToExclude, Group: llUs.SolicitedNode()},
			{Type: ndp.ModeIsInclude, Group: mustAddr("ff05::1:3"), Sources: []ipv6.Addr{gPeer}},
		}}
		b := make([]byte, r.Len())
		r.Emit(b, llUs, ipv6.AllMLDv2Routers())
		back, err := ndp.ParseReport(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(r))

		pkt := gopacket.NewPacket(b, layers.LayerTypeICMPv6, gopacket.Default)
		l := pkt.Layer(layers.LayerTypeMLDv2MulticastListenerReport)
		Expect(l).NotTo(BeNil(), "%v", pkt.ErrorLayer())
		g := l.(*layers.MLDv2MulticastListenerReportMessage)
		Expect(g.NumberOfMulticastAddressRecords).To(Equal(uint16(2)))
		Expect(g.MulticastAddressRecords[0].RecordType).To(Equal(layers.MLDv2MulticastAddressRecordTypeChangeToExcludeMode))
		Expect(g.MulticastAddressRecords[1].SourceAddresses).To(HaveLen(1))

		// The Hop-by-Hop header: gopacket reads a Router Alert in it.
		hbh := ndp.RouterAlertHopByHop(58)
		p := gopacket.NewPacket(hbh[:], layers.LayerTypeIPv6HopByHop, gopacket.Default)
		h := p.Layer(layers.LayerTypeIPv6HopByHop).(*layers.IPv6HopByHop)
		Expect(h.NextHeader).To(Equal(layers.IPProtocolICMPv6))
		Expect(h.Options[0].OptionType).To(Equal(uint8(5)))
		Expect(h.Options[0].OptionData).To(Equal([]byte{0, 0}))
	})
})

var _ = Describe("MLDv2 listener (RFC 3810 sections 6, 7)", func() {
	var (
		n   *ndp.Node
		rec *recorder
	)
	group := mustAddr("ff05::1:3")
	BeforeEach(func() { n, rec = upNode(quiet()) })

	It("listens to all-nodes and each address's solicited-node group, as the NIC filter's MACs", func() {
		Expect(n.AddStatic(0, mustAddr("fd00::1:2:3"), 64, rec)).To(Succeed())
		Expect(n.Groups(nil)).To(ConsistOf(ipv6.AllNodes(), llUs.SolicitedNode(), mustAddr("fd00::1:2:3").SolicitedNode()))
		Expect(n.MulticastMACs(nil)).To(ConsistOf(
			ether.Addr{0x33, 0x33, 0, 0, 0, 1},
			ether.Addr{0x33, 0x33, 0xff, 0, 0, 1},
			ether.Addr{0x33, 0x33, 0xff, 2, 0, 3}, // ff02::1:ff02:3
		))
		Expect(rec.eventsOf(ndp.EventGroupsChanged)).To(HaveLen(1))
	})

	It("announces a join with CHANGE_TO_EXCLUDE_MODE({}) Robustness (2) times, the repeat within the Unsolicited Report Interval (6.1, 9.11)", func() {
		Expect(n.Join(0, group, rec)).To(Succeed())
		run(n, rec, 0, 5*time.Second)
		reports := rec.of(icmpv6.TypeMLDv2Report)
		Expect(reports).To(HaveLen(2))
		Expect(reports[0].at).To(BeZero())
		Expect(reports[1].at).To(And(BeNumerically(">", 0), BeNumerically("<=", time.Second)))
		for _, r := range reports {
			Expect(r.out.Dst).To(Equal(ipv6.AllMLDv2Routers()))
			Expect(r.out.LinkDst).To(Equal(ether.Addr{0x33, 0x33, 0, 0, 0, 0x16}))
			Expect(r.out.HopLimit).To(Equal(uint8(1)))
			Expect(r.out.RouterAlert).To(BeTrue())
			Expect(r.out.Src).To(Equal(llUs))
		}
		Expect(records(rec)).To(Equal([]ndp.AddressRecord{{Type: ndp.ChangeToExclude, Group: group}, {Type: ndp.ChangeToExclude, Group: group}}))
		Expect(n.Join(0, ipv6.AllRouters(), rec)).To(Succeed())
		Expect(n.Join(0, gPeer, rec)).To(MatchError(ContainSubstring("not a multicast")))
	})

	It("never reports all-nodes, and reports a tentative address's group from :: (6, 5.2.13)", func() {
		n = newNode(quiet(), 1)
		rec = &recorder{}
		Expect(n.Start(0, rec)).To(Succeed())
		run(n, rec, 0, 5*time.Second)
		recs := records(rec)
		Expect(recs).NotTo(BeEmpty())
		for _, r := range recs {
			Expect(r.Group).To(Equal(llUs.SolicitedNode()))
		}
		Expect(rec.of(icmpv6.TypeMLDv2Report)[0].out.Src).To(Equal(ipv6.Addr{}), "no link-local address yet")
	})

	It("announces a leave with CHANGE_TO_INCLUDE_MODE({}) and drops the group from the filter (6.1)", func() {
		Expect(n.Join(0, group, rec)).To(Succeed())
		Expect(n.Join(0, group, rec)).To(Succeed())
		run(n, rec, 0, 5*time.Second)
		rec.reset()
		n.Leave(5*time.Second, group, rec)
		Expect(n.Groups(nil)).To(ContainElement(group), "joined twice")
		n.Leave(5*time.Second, group, rec)
		Expect(n.Groups(nil)).NotTo(ContainElement(group))
		run(n, rec, 5*time.Second, 10*time.Second)
		Expect(records(rec)).To(Equal([]ndp.AddressRecord{{Type: ndp.ChangeToInclude, Group: group}, {Type: ndp.ChangeToInclude, Group: group}}))
	})

	It("answers a General Query with every group MODE_IS_EXCLUDE within Maximum Response Delay (6.2, 6.3)", func() {
		Expect(n.Join(0, group, rec)).To(Succeed())
		run(n, rec, 0, 5*time.Second)
		rec.reset()
		t := 10 * time.Second
		q := emitQuery(ndp.Query{Version: 2, MaxRespDelay: 2 * time.Second}, llRouter, ipv6.AllNodes())
		n.Input(t, mldIP(llRouter, ipv6.AllNodes()), q, rec)
		n.Input(t+time.Millisecond, mldIP(llRouter, ipv6.AllNodes()), q, rec)
		run(n, rec, t, t+5*time.Second)
		reports := rec.of(icmpv6.TypeMLDv2Report)
		Expect(reports).To(HaveLen(1), "one pending response at a time (rule 1)")
		Expect(reports[0].at).To(BeNumerically("<", t+2*time.Second))
		Expect(records(rec)).To(ConsistOf(
			ndp.AddressRecord{Type: ndp.ModeIsExclude, Group: group},
			ndp.AddressRecord{Type: ndp.ModeIsExclude, Group: llUs.SolicitedNode()},
		))
		Expect(n.Stats().RxQueries).To(Equal(uint64(2)))
	})

	It("answers address-specific queries for joined groups: IS_EX({}), or IS_IN(sources) for a source-specific one (6.3)", func() {
		Expect(n.Join(0, group, rec)).To(Succeed())
		run(n, rec, 0, 5*time.Second)
		rec.reset()
		t := 10 * time.Second
		n.Input(t, mldIP(llRouter, group), emitQuery(ndp.Query{Version: 2, MaxRespDelay: time.Second, Group: group}, llRouter, group), rec)
		other := mustAddr("ff05::99")
		n.Input(t, mldIP(llRouter, other), emitQuery(ndp.Query{Version: 2, MaxRespDelay: time.Second, Group: other}, llRouter, other), rec)
		run(n, rec, t, t+5*time.Second)
		Expect(records(rec)).To(Equal([]ndp.AddressRecord{{Type: ndp.ModeIsExclude, Group: group}}))
		Expect(n.Stats().RxQueriesNotJoined).To(Equal(uint64(1)))

		rec.reset()
		t = 20 * time.Second
		q := ndp.Query{Version: 2, MaxRespDelay: time.Second, Group: group, Sources: []ipv6.Addr{gPeer}}
		n.Input(t, mldIP(llRouter, group), emitQuery(q, llRouter, group), rec)
		run(n, rec, t, t+5*time.Second)
		Expect(records(rec)).To(Equal([]ndp.AddressRecord{{Type: ndp.ModeIsInclude, Group: group, Sources: []ipv6.Addr{gPeer}}}))
	})

	It("falls back to MLDv1 reports after an MLDv1 query (8.2.1)", func() {
		Expect(n.Join(0, group, rec)).To(Succeed())
		run(n, rec, 0, 5*time.Second)
		rec.reset()
		t := 10 * time.Second
		n.Input(t, mldIP(llRouter, ipv6.AllNodes()), emitQuery(ndp.Query{Version: 1, MaxRespDelay: time.Second}, llRouter, ipv6.AllNodes()), rec)
		run(n, rec, t, t+5*time.Second)
		Expect(rec.of(icmpv6.TypeMLDv2Report)).To(BeEmpty())
		v1 := rec.of(icmpv6.TypeMLDReport)
		Expect(v1).To(HaveLen(2))
		var dsts []ipv6.Addr
		for _, s := range v1 {
			Expect(s.out.Msg).To(HaveLen(24))
			Expect(s.out.HopLimit).To(Equal(uint8(1)))
			dsts = append(dsts, s.out.Dst)
		}
		Expect(dsts).To(ConsistOf(group, llUs.SolicitedNode()), "each report to its group")
		n.Leave(t+5*time.Second, group, rec)
		run(n, rec, t+5*time.Second, t+10*time.Second)
		dones := rec.of(icmpv6.TypeMLDDone)
		Expect(dones).NotTo(BeEmpty())
		Expect(dones[0].out.Dst).To(Equal(ipv6.AllRouters()))
		Expect(n.Stats().V1ModeEntered).To(Equal(uint64(1)))
	})

	It("splits a report that would not fit the link MTU (5.2.15)", func() {
		cfg := quiet()
		cfg.MaxGroups = 200
		cfg.LinkMTU = 1280
		n, rec = upNode(cfg)
		for i := range 100 {
			Expect(n.Join(0, ipv6.Addr{0: 0xff, 1: 0x05, 14: byte(i >> 8), 15: byte(i)}, rec)).To(Succeed())
		}
		run(n, rec, 0, 0)
		reports := rec.of(icmpv6.TypeMLDv2Report)
		Expect(len(reports)).To(Equal(2), "61 records of 20 bytes fit 1280-48")
		for _, r := range reports {
			Expect(40 + 8 + len(r.out.Msg)).To(BeNumerically("<=", 1280))
		}
		Expect(records(rec)).To(HaveLen(100))
	})
})
