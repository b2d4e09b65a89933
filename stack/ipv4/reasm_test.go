package ipv4_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv4"
)

type timeouts struct{ quotes [][]byte }

func (t *timeouts) ReassemblyTimeout(now time.Duration, q []byte) {
	t.quotes = append(t.quotes, append([]byte(nil), q...))
}

var _ = Describe("Reassembler", func() {
	var (
		st ipv4.Stats
		ra *ipv4.Reassembler
	)
	payload := pattern(4000)
	newRA := func(cfg ipv4.ReasmConfig) {
		st = ipv4.Stats{}
		var err error
		ra, err = ipv4.NewReassembler(cfg, &st)
		Expect(err).NotTo(HaveOccurred())
	}
	BeforeEach(func() { newRA(ipv4.ReasmConfig{}) })

	feed := func(now time.Duration, id uint16, off, n int, more bool) (ipv4.Packet, error) {
		p, r := fragment(id, payload, off, n, more)
		return ra.Input(now, p, r)
	}
	checkWhole := func(d ipv4.Packet, n int) {
		r, err := ipv4.Parse(d, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.IsFragment()).To(BeFalse())
		Expect(r.PayloadLen).To(Equal(n))
		Expect(r.Src).To(Equal(src))
		Expect(d.Payload()).To(Equal(payload[:n]))
	}

	It("reassembles in order", func() {
		for off := 0; off < 2960; off += 1480 {
			d, err := feed(0, 1, off, 1480, true)
			Expect(err).NotTo(HaveOccurred())
			Expect(d).To(BeNil())
		}
		d, err := feed(0, 1, 2960, 1040, false)
		Expect(err).NotTo(HaveOccurred())
		checkWhole(d, 4000)
		Expect(st.ReasmReqds).To(Equal(uint64(3)))
		Expect(st.ReasmOKs).To(Equal(uint64(1)))
		Expect(ra.InProgress()).To(Equal(0))
		Expect(ra.BufferedBytes()).To(Equal(0))
	})

	DescribeTable("reassembles in any order", func(order []int) {
		offs := []int{0, 1000, 2000, 3000}
		var d ipv4.Packet
		for k, idx := range order {
			var err error
			d, err = feed(time.Duration(k)*time.Millisecond, 2, offs[idx], 1000, idx != 3)
			Expect(err).NotTo(HaveOccurred())
			if k < len(order)-1 {
				Expect(d).To(BeNil())
			}
		}
		checkWhole(d, 4000)
	},
		Entry("reverse", []int{3, 2, 1, 0}),
		Entry("last first", []int{3, 0, 1, 2}),
		Entry("middle out", []int{1, 2, 0, 3}),
		Entry("interleaved", []int{2, 0, 3, 1}),
	)

	It("ignores exact duplicates", func() {
		feed(0, 3, 0, 1000, true)
		_, err := feed(0, 3, 0, 1000, true)
		Expect(err).To(Equal(ipv4.ErrReasmDuplicate))
		d, err := feed(0, 3, 1000, 500, false)
		Expect(err).NotTo(HaveOccurred())
		checkWhole(d, 1500)
		Expect(st.ReasmDuplicates).To(Equal(uint64(1)))
		Expect(st.ReasmFails).To(BeZero())
	})

	DescribeTable("drops the datagram on overlap (RFC 5722 spirit)", func(off, n int, more bool) {
		feed(0, 4, 0, 1000, true)
		feed(0, 4, 2000, 1000, false)
		_, err := feed(0, 4, off, n, more)
		Expect(err).To(Equal(ipv4.ErrReasmOverlap))
		Expect(st.ReasmOverlaps).To(Equal(uint64(1)))
		Expect(st.ReasmFails).To(Equal(uint64(1)))
		Expect(ra.InProgress()).To(Equal(0))
		Expect(ra.BufferedBytes()).To(Equal(0))
		// The rest of the datagram starts a fresh, incomplete one.
		d, err := feed(0, 4, 1000, 1000, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(d).To(BeNil())
	},
		Entry("over the head", 992, 16, true),
		Entry("over the tail", 1992, 16, true),
		Entry("inside a fragment", 8, 16, true),
		Entry("same offset, other length", 0, 992, true),
		Entry("spanning the hole", 0, 3000, false),
	)

	It("drops datagrams whose fragments disagree on the end", func() {
		feed(0, 5, 1000, 1000, false)
		_, err := feed(0, 5, 2000, 1000, false)
		Expect(err).To(Equal(ipv4.ErrReasmInconsistent))
		feed(0, 6, 2000, 1000, true)
		_, err = feed(0, 6, 0, 1000, false)
		Expect(err).To(Equal(ipv4.ErrReasmInconsistent))
		Expect(st.ReasmInconsistent).To(Equal(uint64(2)))
	})

	It("times out and quotes fragment 0 for ICMP time exceeded", func() {
		feed(time.Second, 7, 0, 1000, true)
		feed(2*time.Second, 8, 1000, 1000, true) // no fragment 0: no ICMP
		sink := &timeouts{}
		Expect(ra.Poll(0, sink)).To(Equal(31 * time.Second))
		Expect(ra.Poll(31*time.Second-1, sink)).To(Equal(31 * time.Second))
		Expect(ra.Poll(31*time.Second, sink)).To(Equal(32 * time.Second))
		Expect(sink.quotes).To(HaveLen(1))
		q := ipv4.Packet(sink.quotes[0])
		Expect(q).To(HaveLen(28))
		Expect(q.Ident()).To(Equal(uint16(7)))
		Expect([]byte(q[20:])).To(Equal(payload[:8]))
		Expect(ra.Poll(32*time.Second, sink)).To(Equal(ipv4.Never))
		Expect(sink.quotes).To(HaveLen(1))
		Expect(st.ReasmTimeout).To(Equal(uint64(2)))
		Expect(st.ReasmTimeoutWithFirst).To(Equal(uint64(1)))
		Expect(st.ReasmFails).To(Equal(uint64(2)))
		Expect(ra.BufferedBytes()).To(Equal(0))
	})

	It("bounds concurrent datagrams", func() {
		newRA(ipv4.ReasmConfig{MaxDatagrams: 2})
		feed(0, 1, 0, 8, true)
		feed(0, 2, 0, 8, true)
		_, err := feed(0, 3, 0, 8, true)
		Expect(err).To(Equal(ipv4.ErrReasmTableFull))
		Expect(st.ReasmTableFull).To(Equal(uint64(1)))
		Expect(ra.InProgress()).To(Equal(2))
	})

	It("bounds fragments per datagram", func() {
		newRA(ipv4.ReasmConfig{MaxFragments: 3})
		for k := range 3 {
			_, err := feed(0, 1, k*8, 8, true)
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := feed(0, 1, 24, 8, true)
		Expect(err).To(Equal(ipv4.ErrReasmTooManyFrags))
		Expect(ra.InProgress()).To(Equal(0))
	})

	It("bounds buffered bytes", func() {
		newRA(ipv4.ReasmConfig{MaxBytes: 2000})
		feed(0, 1, 0, 1480, true)
		_, err := feed(0, 2, 0, 1480, true)
		Expect(err).To(Equal(ipv4.ErrReasmMemFull))
		Expect(st.ReasmMemFull).To(Equal(uint64(1)))
		Expect(ra.InProgress()).To(Equal(1), "the refused datagram holds no slot")
		Expect(ra.BufferedBytes()).To(Equal(1480))
	})

	It("refuses datagrams that would exceed 65535 bytes with a long first header", func() {
		// First fragment with 40 bytes of options, last fragment ending at 65512.
		p, r := fragment(9, pattern(65512), 65000, 512, false)
		_, err := ra.Input(0, p, r)
		Expect(err).NotTo(HaveOccurred())
		b := make([]byte, 60+8)
		ipv4.Repr{Src: src, Dst: dst, Protocol: ipv4.ProtoUDP, TTL: 64, Ident: 9, MoreFrags: true, PayloadLen: 8}.Emit(ipv4.Packet(b), false)
		q := ipv4.Packet(b)
		q.SetVersionIHL(60)
		q.SetTotalLen(68)
		q.FillChecksum()
		rr, err := ipv4.Parse(q, true)
		Expect(err).NotTo(HaveOccurred())
		// Fill the middle quickly with one big fragment.
		mid := make([]byte, 20+64992)
		ipv4.Repr{Src: src, Dst: dst, Protocol: ipv4.ProtoUDP, TTL: 64, Ident: 9, MoreFrags: true, FragOffset: 8, PayloadLen: 64992}.Emit(ipv4.Packet(mid), true)
		mr, err := ipv4.Parse(ipv4.Packet(mid), true)
		Expect(err).NotTo(HaveOccurred())
		_, err = ra.Input(0, ipv4.Packet(mid), mr)
		Expect(err).NotTo(HaveOccurred())
		_, err = ra.Input(0, q, rr)
		Expect(err).To(Equal(ipv4.ErrReasmInconsistent))
	})

	It("does not allocate in steady state", func() {
		frags := make([]ipv4.Packet, 3)
		reprs := make([]ipv4.Repr, 3)
		frags[0], reprs[0] = fragment(1, payload, 0, 1480, true)
		frags[1], reprs[1] = fragment(1, payload, 1480, 1480, true)
		frags[2], reprs[2] = fragment(1, payload, 2960, 1040, false)
		run := func() {
			for k := range frags {
				ra.Input(0, frags[k], reprs[k])
			}
		}
		run()
		Expect(testing_AllocsPerRun(100, run)).To(BeZero())
	})

	DescribeTable("config validation names the key", func(c ipv4.ReasmConfig, key string) {
		Expect(c.Validate()).To(MatchError(HavePrefix(key + ":")))
		_, err := ipv4.NewReassembler(c, nil)
		Expect(err).To(MatchError(ContainSubstring(key)))
	},
		Entry(nil, ipv4.ReasmConfig{Timeout: -1}, "timeout"),
		Entry(nil, ipv4.ReasmConfig{MaxDatagrams: -1}, "max_datagrams"),
		Entry(nil, ipv4.ReasmConfig{MaxFragments: 10000}, "max_fragments"),
		Entry(nil, ipv4.ReasmConfig{MaxBytes: -1}, "max_bytes"),
	)
})
