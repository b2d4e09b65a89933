package ipv6_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

var _ = Describe("Fragment reassembly (RFC 8200 section 4.5)", func() {
	var (
		rc *ipv6.Receiver
		st *ipv6.Stats
	)
	BeforeEach(func() { rc, st = newReceiver(ipv6.ReceiverConfig{}) })

	// The upper layer is a UDP-shaped 4000-byte payload split at 8-byte
	// multiples.
	upper := pattern(4000)
	fragOf := func(id uint32, off, n int, more bool, pre ...ext) ipv6.Packet {
		return packet(src, dst, ipv6.NextUDP, upper[off:off+n], append(pre, frag(off, more, id))...)
	}
	in := func(now time.Duration, p ipv6.Packet) ipv6.Result { return rc.Input(now, p) }
	held := func(res ipv6.Result) {
		Expect(res.Err).To(BeZero(), res.Err.Error())
		Expect(res.Action).To(Equal(ipv6.Held))
	}
	whole := func(res ipv6.Result) {
		Expect(res.Err).To(BeZero(), res.Err.Error())
		Expect(res.Action).To(Equal(ipv6.Deliver))
		Expect(res.Reassembled).To(BeTrue())
		Expect(res.Proto).To(Equal(ipv6.NextUDP))
		Expect(res.Payload()).To(Equal(upper))
		Expect(int(res.Packet.PayloadLen())).To(Equal(len(res.Packet) - ipv6.HeaderLen))
		Expect(res.Packet.Src()).To(Equal(src))
	}

	It("puts the packet back together in order, with the fragment header gone", func() {
		held(in(0, fragOf(1, 0, 1448, true)))
		held(in(0, fragOf(1, 1448, 1448, true)))
		res := in(0, fragOf(1, 2896, 1104, false))
		whole(res)
		Expect(res.Offset).To(Equal(ipv6.HeaderLen))
		Expect(res.Packet.NextHeader()).To(Equal(ipv6.NextUDP))
		Expect(st.ReasmReqds).To(Equal(uint64(3)))
		Expect(st.ReasmOKs).To(Equal(uint64(1)))
		Expect(st.InDelivers).To(Equal(uint64(1)))
		Expect(rc.Reassembler().InProgress()).To(BeZero())
		Expect(rc.Reassembler().BufferedBytes()).To(BeZero())
	})

	DescribeTable("in any order", func(order []int) {
		offs := []int{0, 1000, 2000, 3000}
		var res ipv6.Result
		for k, i := range order {
			res = in(time.Duration(k)*time.Millisecond, fragOf(2, offs[i], 1000, i != 3))
			if k < len(order)-1 {
				held(res)
			}
		}
		whole(res)
	},
		Entry("reverse", []int{3, 2, 1, 0}),
		Entry("last first", []int{3, 0, 1, 2}),
		Entry("interleaved", []int{2, 0, 3, 1}),
	)

	It("keeps only the first fragment's unfragmentable headers and walks the fragmentable ones", func() {
		// Destination options before the fragment header are
		// unfragmentable; the ones after it travel in the first
		// fragment's data.
		do := opts(ipv6.NextDestOpts)
		body := append(append([]byte{ipv6.NextUDP}, do.body...), upper...) // dest opts, then UDP
		mk := func(off, n int, more bool, pre ...ext) ipv6.Packet {
			p := packet(src, dst, ipv6.NextDestOpts, body[off:off+n], append(pre, frag(off, more, 3))...)
			return p
		}
		held(in(0, mk(1000, len(body)-1000, false)))                      // no unfragmentable headers
		res := in(0, mk(0, 1000, true, opts(ipv6.NextHopByHop, 0x1e, 0))) // hop-by-hop
		Expect(res.Err).To(BeZero(), res.Err.Error())
		Expect(res.Action).To(Equal(ipv6.Deliver))
		Expect(res.Packet.NextHeader()).To(Equal(ipv6.NextHopByHop))
		Expect(res.Packet[ipv6.HeaderLen]).To(Equal(ipv6.NextDestOpts)) // rewritten from 44
		Expect(res.Offset).To(Equal(ipv6.HeaderLen + 8 + 8))
		Expect(res.Payload()).To(Equal(upper))
	})

	It("keys datagrams by source, destination and identification", func() {
		other := ipv6.Addr{0: 0xfd, 15: 9}
		held(in(0, fragOf(4, 0, 2000, true)))
		held(in(0, packet(other, dst, ipv6.NextUDP, upper[2000:], frag(2000, false, 4))))
		held(in(0, fragOf(5, 2000, 2000, false)))
		Expect(rc.Reassembler().InProgress()).To(Equal(3))
		whole(in(0, fragOf(4, 2000, 2000, false)))
	})

	It("ignores an exact duplicate (section 4.5) and still completes", func() {
		held(in(0, fragOf(6, 0, 2000, true)))
		res := in(0, fragOf(6, 0, 2000, true))
		Expect(res.Err).To(Equal(ipv6.ErrReasmDuplicate))
		Expect(st.ReasmDuplicates).To(Equal(uint64(1)))
		Expect(st.ReasmFails).To(BeZero())
		whole(in(0, fragOf(6, 2000, 2000, false)))
	})

	Context("RFC 5722 section 4: overlapping fragments", func() {
		It("discards the whole datagram and every later fragment of it", func() {
			held(in(0, fragOf(7, 0, 2000, true)))
			held(in(0, fragOf(7, 3000, 1000, false)))
			res := in(0, fragOf(7, 1000, 1200, true)) // overlaps [0,2000)
			Expect(res.Err).To(Equal(ipv6.ErrReasmOverlap))
			Expect(res.ICMP.IsZero()).To(BeTrue()) // silently
			Expect(rc.Reassembler().BufferedBytes()).To(BeZero())
			// The fragment that would have completed it, and a resent
			// first fragment, are discarded too.
			res = in(time.Second, fragOf(7, 2000, 1000, true))
			Expect(res.Err).To(Equal(ipv6.ErrReasmDiscarded))
			res = in(time.Second, fragOf(7, 0, 2000, true))
			Expect(res.Err).To(Equal(ipv6.ErrReasmDiscarded))
			Expect(st.ReasmOverlaps).To(Equal(uint64(1)))
			Expect(st.ReasmDiscarded).To(Equal(uint64(2)))
			Expect(st.ReasmFails).To(Equal(uint64(1)))
			Expect(st.ReasmOKs).To(BeZero())
		})
		It("frees the slot at the timeout without Time Exceeded", func() {
			held(in(0, fragOf(8, 0, 2000, true)))
			Expect(in(0, fragOf(8, 8, 16, true)).Err).To(Equal(ipv6.ErrReasmOverlap))
			var sink timeouts
			Expect(rc.Poll(60*time.Second, &sink)).To(Equal(ipv6.Never))
			Expect(sink.quotes).To(BeEmpty())
			Expect(rc.Reassembler().InProgress()).To(BeZero())
			Expect(st.ReasmTimeout).To(BeZero())
			// A new datagram with the identification may then start.
			held(in(61*time.Second, fragOf(8, 0, 2000, true)))
			whole(in(61*time.Second, fragOf(8, 2000, 2000, false)))
		})
	})

	Context("RFC 6946: atomic fragments", func() {
		It("processes an atomic fragment in isolation, beside a reassembly of the same identification", func() {
			held(in(0, fragOf(9, 0, 2000, true)))
			res := in(0, packet(src, dst, ipv6.NextUDP, udp(100), frag(0, false, 9)))
			Expect(res.Err).To(BeZero())
			Expect(res.Action).To(Equal(ipv6.Deliver))
			Expect(res.Reassembled).To(BeFalse())
			Expect(res.Payload()).To(Equal(udp(100)))
			Expect(res.Offset).To(Equal(ipv6.HeaderLen + 8))
			Expect(st.InAtomicFragments).To(Equal(uint64(1)))
			Expect(st.ReasmReqds).To(Equal(uint64(1)))
			whole(in(0, fragOf(9, 2000, 2000, false)))
		})
	})

	Context("RFC 7112: the first fragment carries the whole header chain", func() {
		It("drops a first fragment that ends inside the extension headers, with Parameter Problem code 3 pointer 0", func() {
			// The fragmentable part starts with a 16-byte destination
			// options header; the first fragment carries 8 bytes of it.
			p := packet(src, dst, ipv6.NextDestOpts, []byte{ipv6.NextUDP, 1, 0, 0, 0, 0, 0, 0}, frag(0, true, 10))
			res := in(0, p)
			Expect(res.Err).To(Equal(ipv6.ErrIncompleteChain))
			Expect(res.ICMP).To(Equal(ipv6.ICMPError{Type: ipv6.ICMPParamProblem, Code: 3, Pointer: 0}))
			Expect(st.RxIncompleteChain).To(Equal(uint64(1)))
			Expect(rc.Reassembler().InProgress()).To(BeZero())
		})
		It("drops a first fragment without the fixed part of its TCP header", func() {
			p := packet(src, dst, ipv6.NextTCP, pattern(16), frag(0, true, 11))
			Expect(in(0, p).Err).To(Equal(ipv6.ErrIncompleteChain))
			p = packet(src, dst, ipv6.NextTCP, pattern(24), frag(0, true, 11))
			held(in(0, p))
		})
	})

	It("answers Parameter Problem code 0 at the payload length for M set and a length not a multiple of 8", func() {
		res := in(0, fragOf(12, 0, 1001, true))
		Expect(res.Err).To(Equal(ipv6.ErrFragLength))
		Expect(res.ICMP).To(Equal(ipv6.ICMPError{Type: ipv6.ICMPParamProblem, Code: 0, Pointer: ipv6.OffPayloadLen}))
		Expect(st.RxBadFragLength).To(Equal(uint64(1)))
		held(in(0, fragOf(12, 0, 1000, true)))
		whole(in(0, fragOf(12, 1000, 3000, false))) // the last may be any length
	})

	It("answers Parameter Problem code 0 at the fragment offset for a packet that would exceed 65535 bytes", func() {
		p := packet(src, dst, ipv6.NextUDP, pattern(16), frag(65528, false, 13))
		res := in(0, p)
		Expect(res.Err).To(Equal(ipv6.ErrFragTooLong))
		Expect(res.ICMP).To(Equal(ipv6.ICMPError{Type: ipv6.ICMPParamProblem, Code: 0, Pointer: ipv6.HeaderLen + 2}))
		// 65535 exactly: the fragment header goes, so 65520+15 fits.
		held(in(0, packet(src, dst, ipv6.NextUDP, pattern(15), frag(65520, false, 13))))
	})

	It("drops an empty fragment and a nested fragment header", func() {
		Expect(in(0, packet(src, dst, ipv6.NextUDP, nil, frag(8, true, 14))).Err).To(Equal(ipv6.ErrFragEmpty))
		p := packet(src, dst, ipv6.NextUDP, udp(8), frag(0, false, 14), frag(0, true, 15))
		Expect(in(0, p).Err).To(Equal(ipv6.ErrNestedFragment))
	})

	Context("the 60-second reassembly timeout", func() {
		It("gives up after 60 s and asks for Time Exceeded code 1 quoting the first fragment", func() {
			first := fragOf(16, 0, 2000, true)
			held(in(0, first))
			held(in(10*time.Second, fragOf(16, 3000, 1000, false)))
			var sink timeouts
			Expect(rc.Poll(60*time.Second-1, &sink)).To(Equal(60 * time.Second))
			Expect(sink.quotes).To(BeEmpty())
			Expect(rc.Poll(60*time.Second, &sink)).To(Equal(ipv6.Never))
			Expect(sink.quotes).To(HaveLen(1))
			Expect(sink.quotes[0]).To(Equal([]byte(first[:ipv6.MaxQuoteLen])))
			Expect(st.ReasmTimeout).To(Equal(uint64(1)))
			Expect(st.ReasmTimeoutWithFirst).To(Equal(uint64(1)))
			Expect(st.ReasmFails).To(Equal(uint64(1)))
			Expect(rc.Reassembler().BufferedBytes()).To(BeZero())
		})
		It("sends nothing when the first fragment never came", func() {
			held(in(0, fragOf(17, 2000, 2000, false)))
			var sink timeouts
			rc.Poll(time.Minute, &sink)
			Expect(sink.quotes).To(BeEmpty())
			Expect(st.ReasmTimeout).To(Equal(uint64(1)))
			Expect(st.ReasmTimeoutWithFirst).To(BeZero())
		})
	})

	Context("bounds", func() {
		It("bounds datagrams: a full table refuses new ones (InDiscards)", func() {
			rc, st = newReceiver(ipv6.ReceiverConfig{Reasm: ipv6.ReasmConfig{MaxDatagrams: 2}})
			held(in(0, fragOf(20, 0, 1000, true)))
			held(in(0, fragOf(21, 0, 1000, true)))
			Expect(in(0, fragOf(22, 0, 1000, true)).Err).To(Equal(ipv6.ErrReasmTableFull))
			Expect(st.InDiscards).To(Equal(uint64(1)))
			Expect(st.ReasmTableFull).To(Equal(uint64(1)))
		})
		It("bounds bytes buffered", func() {
			rc, st = newReceiver(ipv6.ReceiverConfig{Reasm: ipv6.ReasmConfig{MaxBytes: 2500}})
			held(in(0, fragOf(23, 0, 2000, true)))
			Expect(in(0, fragOf(24, 0, 1000, true)).Err).To(Equal(ipv6.ErrReasmMemFull))
			Expect(rc.Reassembler().InProgress()).To(Equal(1))
			Expect(rc.Reassembler().BufferedBytes()).To(Equal(2000))
			Expect(st.ReasmMemFull).To(Equal(uint64(1)))
		})
		It("bounds the fragments of one datagram", func() {
			rc, st = newReceiver(ipv6.ReceiverConfig{Reasm: ipv6.ReasmConfig{MaxFragments: 3}})
			for off := 0; off < 3*8; off += 8 {
				held(in(0, fragOf(25, off, 8, true)))
			}
			Expect(in(0, fragOf(25, 24, 8, true)).Err).To(Equal(ipv6.ErrReasmTooManyFrags))
			Expect(rc.Reassembler().InProgress()).To(BeZero())
		})
		It("drops a datagram whose fragments disagree on its end", func() {
			held(in(0, fragOf(26, 2000, 2000, false)))
			Expect(in(0, fragOf(26, 1000, 1000, false)).Err).To(Equal(ipv6.ErrReasmInconsistent))
			Expect(st.ReasmInconsistent).To(Equal(uint64(1)))
		})
		It("refuses a first fragment whose unfragmentable part is longer than the minimum MTU", func() {
			var pad []byte
			for range 6 {
				pad = append(pad, ipv6.OptPadN, 250)
				pad = append(pad, make([]byte, 250)...)
			}
			res := in(0, fragOf(27, 0, 1000, true, opts(ipv6.NextDestOpts, pad...)))
			Expect(res.Err).To(Equal(ipv6.ErrReasmTooLong))
			Expect(st.ReasmTooLong).To(Equal(uint64(1)))
			Expect(rc.Reassembler().InProgress()).To(BeZero())
		})
		It("refuses a bad configuration by key", func() {
			_, err := ipv6.NewReceiver(ipv6.ReceiverConfig{Reasm: ipv6.ReasmConfig{MaxDatagrams: -1}}, nil)
			Expect(err).To(MatchError(ContainSubstring("max_datagrams")))
			_, err = ipv6.NewReceiver(ipv6.ReceiverConfig{MaxOptions: 1000}, nil)
			Expect(err).To(MatchError(ContainSubstring("max_options")))
		})
		It("defaults to 60 s, 64 datagrams and 4 MiB", func() {
			c := rc.Config().Reasm
			Expect(c.Timeout).To(Equal(60 * time.Second))
			Expect(c.MaxDatagrams).To(Equal(64))
			Expect(c.MaxBytes).To(Equal(4 << 20))
		})
	})

	It("does not allocate in steady state", func() {
		a, b := fragOf(30, 0, 2000, true), fragOf(30, 2000, 2000, false)
		in(0, a)
		in(0, b)
		Expect(testing_AllocsPerRun(100, func() {
			in(0, a)
			in(0, b)
		})).To(BeZero())
	})
})

var _ = Describe("Hop-by-hop after a fragment header (RFC 8200 sections 4.1, 4.5)", func() {
	It("is refused with Parameter Problem code 1 once reassembled, pointing at the field that names it", func() {
		rc, st := newReceiver(ipv6.ReceiverConfig{})
		hbh := opts(ipv6.NextHopByHop)
		body := append(append([]byte{ipv6.NextUDP}, hbh.body...), pattern(2000)...)
		p1 := packet(src, dst, ipv6.NextHopByHop, body[:1000], frag(0, true, 1))
		p2 := packet(src, dst, ipv6.NextHopByHop, body[1000:], frag(1000, false, 1))
		Expect(rc.Input(0, p1).Action).To(Equal(ipv6.Held))
		res := rc.Input(0, p2)
		Expect(res.Reassembled).To(BeTrue())
		Expect(res.Err).To(Equal(ipv6.ErrHopByHopNotFirst))
		Expect(res.ICMP).To(Equal(ipv6.ICMPError{Type: ipv6.ICMPParamProblem, Code: 1, Pointer: ipv6.OffNextHeader}))
		Expect(st.RxHopByHopNotFirst).To(Equal(uint64(1)))
	})
	It("is refused after an atomic fragment header too", func() {
		rc, _ := newReceiver(ipv6.ReceiverConfig{})
		res := rc.Input(0, packet(src, dst, ipv6.NextUDP, pattern(8), frag(0, false, 2), opts(ipv6.NextHopByHop)))
		Expect(res.Err).To(Equal(ipv6.ErrHopByHopNotFirst))
		Expect(res.ICMP.Pointer).To(Equal(uint32(ipv6.HeaderLen)))
	})
})

var _ = Describe("A fragment header inside a reassembled packet (RFC 8200 section 4.5)", func() {
	It("is dropped, not reassembled again", func() {
		rc, st := newReceiver(ipv6.ReceiverConfig{})
		inner := frag(0, true, 99)
		body := append(append([]byte{ipv6.NextUDP}, inner.body...), pattern(2000)...)
		Expect(rc.Input(0, packet(src, dst, ipv6.NextFragment, body[:1000], frag(0, true, 1))).Action).To(Equal(ipv6.Held))
		res := rc.Input(0, packet(src, dst, ipv6.NextFragment, body[1000:], frag(1000, false, 1)))
		Expect(res.Err).To(Equal(ipv6.ErrNestedFragment))
		Expect(st.RxNestedFragment).To(Equal(uint64(1)))
		Expect(st.ReasmReqds).To(Equal(uint64(2)))
		Expect(rc.Reassembler().InProgress()).To(BeZero())
	})
})
