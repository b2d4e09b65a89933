package ipv6_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

var _ = Describe("Fragment on output (RFC 8200 section 4.5)", func() {
	h := ipv6.Repr{Src: src, Dst: dst, NextHeader: ipv6.NextUDP, HopLimit: 64, FlowLabel: 7}

	It("splits into fragments of 8-byte multiples within the MTU that reassemble to the packet", func() {
		payload := pattern(5000)
		var st ipv6.Stats
		frags, err := ipv6.Fragment(h, payload, 1280, 0xdeadbeef, &st)
		Expect(err).NotTo(HaveOccurred())
		Expect(frags).To(HaveLen(5)) // 1232 bytes each but the last
		rc, _ := newReceiver(ipv6.ReceiverConfig{})
		var res ipv6.Result
		for i, f := range frags {
			Expect(len(f)).To(BeNumerically("<=", 1280))
			Expect(f.NextHeader()).To(Equal(ipv6.NextFragment))
			Expect(f.FlowLabel()).To(Equal(uint32(7)))
			data := len(f) - ipv6.HeaderLen - ipv6.FragHeaderLen
			if i < len(frags)-1 {
				Expect(data % 8).To(BeZero())
				Expect(data).To(Equal(1232))
			}
			res = rc.Input(0, f)
		}
		Expect(res.Action).To(Equal(ipv6.Deliver))
		Expect(res.Proto).To(Equal(ipv6.NextUDP))
		Expect(res.Payload()).To(Equal(payload))
		Expect(st.OutFragReqds).To(Equal(uint64(1)))
		Expect(st.OutFragOKs).To(Equal(uint64(1)))
		Expect(st.OutFragCreates).To(Equal(uint64(5)))
	})

	It("rounds the fragment size down to 8 bytes for an odd MTU", func() {
		f, err := ipv6.NewFragments(h, pattern(3000), 1500-3, 1)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.FragmentLen(0) - ipv6.HeaderLen - ipv6.FragHeaderLen).To(Equal(1448))
	})

	It("sends a packet that fits whole, without an atomic fragment header (RFC 8021)", func() {
		frags, err := ipv6.Fragment(h, pattern(1000), 1280, 1, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(frags).To(HaveLen(1))
		Expect(frags[0].NextHeader()).To(Equal(ipv6.NextUDP))
		Expect(frags[0]).To(HaveLen(1040))
	})

	It("refuses an MTU below 1280 (section 5) and a payload over 65535", func() {
		_, err := ipv6.Fragment(h, pattern(2000), 1279, 1, nil)
		Expect(err).To(Equal(ipv6.ErrMTU))
		_, err = ipv6.Fragment(h, pattern(65535-7), 1280, 1, nil)
		Expect(err).To(Equal(ipv6.ErrTooLong))
	})

	It("emits into caller buffers without allocating", func() {
		payload := pattern(4000)
		buf := make([]byte, 1280)
		Expect(testing_AllocsPerRun(100, func() {
			f, _ := ipv6.NewFragments(h, payload, 1280, 9)
			for i := range f.Len() {
				f.Emit(i, buf)
			}
		})).To(BeZero())
	})
})

var _ = Describe("FlowLabel (RFC 6437 section 3)", func() {
	secret := [16]byte{1, 2, 3}
	It("is the same for every packet of a flow and differs across flows and secrets", func() {
		a := ipv6.FlowLabel(secret, src, dst, ipv6.NextTCP, 40000, 6379)
		Expect(ipv6.FlowLabel(secret, src, dst, ipv6.NextTCP, 40000, 6379)).To(Equal(a))
		Expect(ipv6.FlowLabel(secret, src, dst, ipv6.NextTCP, 40001, 6379)).NotTo(Equal(a))
		Expect(ipv6.FlowLabel(secret, dst, src, ipv6.NextTCP, 40000, 6379)).NotTo(Equal(a))
		Expect(ipv6.FlowLabel([16]byte{9}, src, dst, ipv6.NextTCP, 40000, 6379)).NotTo(Equal(a))
	})
	It("is 20 bits, never zero, and spread over the range", func() {
		var hi int
		for port := range 4096 {
			v := ipv6.FlowLabel(secret, src, dst, ipv6.NextTCP, uint16(port), 80)
			Expect(v).To(BeNumerically(">", 0))
			Expect(v).To(BeNumerically("<", 1<<20))
			if v >= 1<<19 {
				hi++
			}
		}
		// The top bit set about half the time: 2048 +- 5 sigma (32).
		Expect(hi).To(BeNumerically("~", 2048, 160))
	})
})

var _ = Describe("PMTUCache (RFC 8201)", func() {
	var c *ipv6.PMTUCache
	BeforeEach(func() {
		var err error
		c, err = ipv6.NewPMTUCache(ipv6.PMTUConfig{LinkMTU: 9000, MaxEntries: 2})
		Expect(err).NotTo(HaveOccurred())
	})

	It("starts every path at the link MTU (section 4)", func() {
		Expect(c.MTU(0, dst)).To(Equal(9000))
		Expect(c.MSS(0, dst)).To(Equal(9000 - 60))
	})

	It("lowers the estimate on a Packet Too Big and derives TCP's MSS from it", func() {
		Expect(c.PacketTooBig(0, dst, 1400)).To(Equal(ipv6.PMTULowered))
		Expect(c.MTU(time.Second, dst)).To(Equal(1400))
		Expect(c.MSS(time.Second, dst)).To(Equal(1340))
		Expect(c.MTU(time.Second, src)).To(Equal(9000))
		Expect(ipv6.MSSForMTU(ipv6.MinMTU)).To(Equal(1220))
	})

	It("never increases on a Packet Too Big (section 4)", func() {
		c.PacketTooBig(0, dst, 1400)
		Expect(c.PacketTooBig(0, dst, 1500)).To(Equal(ipv6.PMTUNotLower))
		Expect(c.PacketTooBig(0, dst, 1400)).To(Equal(ipv6.PMTUNotLower))
		Expect(c.PacketTooBig(0, src, 9001)).To(Equal(ipv6.PMTUNotLower))
		Expect(c.MTU(0, dst)).To(Equal(1400))
		Expect(c.Stats().NotLower).To(Equal(uint64(3)))
	})

	It("never goes below 1280: a report below it is discarded (section 4)", func() {
		Expect(c.PacketTooBig(0, dst, 1279)).To(Equal(ipv6.PMTUBelowMinimum))
		Expect(c.MTU(0, dst)).To(Equal(9000))
		Expect(c.PacketTooBig(0, dst, 1280)).To(Equal(ipv6.PMTULowered))
		Expect(c.MTU(0, dst)).To(Equal(1280))
		Expect(c.Stats().BelowMinimum).To(Equal(uint64(1)))
	})

	It("raises the estimate back to the link MTU after 10 minutes (section 4, Linux's mtu_expires)", func() {
		c.PacketTooBig(time.Minute, dst, 1400)
		Expect(c.Poll(time.Minute)).To(Equal(11 * time.Minute))
		Expect(c.MTU(11*time.Minute-1, dst)).To(Equal(1400))
		Expect(c.MTU(11*time.Minute, dst)).To(Equal(9000))
		Expect(c.Stats().Expired).To(Equal(uint64(1)))
		c.PacketTooBig(time.Minute, src, 1400)
		Expect(c.Poll(11 * time.Minute)).To(Equal(ipv6.Never))
		Expect(c.Len()).To(BeZero())
	})

	It("bounds its entries, evicting the oldest lowering", func() {
		third := ipv6.Addr{0: 0xfd, 15: 3}
		c.PacketTooBig(0, dst, 1400)
		c.PacketTooBig(time.Second, src, 1400)
		c.PacketTooBig(2*time.Second, third, 1400)
		Expect(c.Len()).To(Equal(2))
		Expect(c.MTU(3*time.Second, dst)).To(Equal(9000))
		Expect(c.MTU(3*time.Second, src)).To(Equal(1400))
		Expect(c.MTU(3*time.Second, third)).To(Equal(1400))
		Expect(c.Stats().Evicted).To(Equal(uint64(1)))
	})

	It("refuses a link MTU below 1280 by key", func() {
		_, err := ipv6.NewPMTUCache(ipv6.PMTUConfig{LinkMTU: 1000})
		Expect(err).To(MatchError(ContainSubstring("link_mtu")))
		c, err := ipv6.NewPMTUCache(ipv6.PMTUConfig{LinkMTU: 1500})
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Config().Expires).To(Equal(10 * time.Minute))
	})
})
