package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Refusals a peer sees (issue 17, finding 7)", func() {
	It("answers a SYN past max_conns with a RST, so that the client's connect fails at once with ErrConnRefused", func() {
		srv := tuned(func(c *Config) { c.MaxConns = 1 })
		w := newWire(wireConfig{rateBps: 10e9, latency: 50 * time.Microsecond, seed: 5}, [2]Config{DefaultConfig(), srv})
		_, err := w.stacks[1].Listen(IP{}, 80, 16)
		Expect(err).NotTo(HaveOccurred())
		first, err := w.stacks[0].Connect(0, Addr{w.addrs[0], 0}, Addr{w.addrs[1], 80})
		Expect(err).NotTo(HaveOccurred())
		for w.step(time.Second) && !first.Connected() {
		}
		Expect(first.Connected()).To(BeTrue())

		start := w.now
		second, err := w.stacks[0].Connect(w.now, Addr{w.addrs[0], 0}, Addr{w.addrs[1], 80})
		Expect(err).NotTo(HaveOccurred())
		for w.step(start+10*time.Second) && second.State() != StateClosed {
		}
		Expect(second.Err()).To(MatchError(ErrConnRefused))
		Expect(w.now-start).To(BeNumerically("<", time.Millisecond), "refused within a round trip, not at the client's timeout")
		st := w.stacks[1].Stats()
		Expect(st.ConnLimitRefused).To(BeEquivalentTo(1))
		Expect(st.ConnLimitRsts).To(BeEquivalentTo(1))
		Expect(w.stacks[0].Stats().AttemptFails).To(BeEquivalentTo(1))
		Expect(first.State()).To(Equal(StateEstablished))
	})

	It("drops the SYN silently with conn_limit_action drop, as Gazelle does, and counts it", func() {
		h := newHarness(tuned(func(c *Config) { c.MaxConns = 1; c.ConnLimitAction = ConnLimitDrop }))
		h.established(defaultPeer())
		h.rport++
		h.inject(Repr{Seq: 77, Flags: FlagSYN, Window: 65535})
		h.none()
		Expect(h.s.Stats().ConnLimitRefused).To(BeEquivalentTo(1))
		Expect(h.s.Stats().ConnLimitRsts).To(BeZero())
	})

	It("refuses conn_limit_action other than rst or drop at its key", func() {
		err := tuned(func(c *Config) { c.ConnLimitAction = "reject" }).Validate()
		var ce *ConfigError
		Expect(err).To(BeAssignableToTypeOf(ce))
		Expect(err.(*ConfigError).Key).To(Equal("conn_limit_action"))
	})
})

var _ = Describe("Rate limits on replies a peer can draw (issue 17, finding 8)", func() {
	var h *harness

	Context("ACKs to invalid segments, per connection (Linux tcp_invalid_ratelimit)", func() {
		BeforeEach(func() {
			h = newHarness(DefaultConfig())
			h.established(defaultPeer())
			h.take()
		})

		It("answers 50,000 out-of-window SYNs within one second with one ACK per 500 ms and counts the rest", func() {
			const n = 50000
			start := h.now
			for i := 0; i < n; i++ {
				h.now = start + time.Duration(i)*(time.Second/n)
				h.inject(Repr{Seq: h.peerNxt + 1<<30, Flags: FlagSYN, Window: 1000})
			}
			acks := h.take()
			Expect(len(acks)).To(BeNumerically(">=", 2))
			Expect(len(acks)).To(BeNumerically("<=", 3))
			for _, a := range acks {
				Expect(a.Flags).To(Equal(FlagACK))
			}
			st := h.s.Stats()
			Expect(st.AckSkippedSeq).To(BeEquivalentTo(n - len(acks)))
			Expect(st.Drops.OutOfWindow).To(BeEquivalentTo(n))
		})

		It("still answers every retransmitted data segment below RCV.NXT with a duplicate ACK (not an ACK loop)", func() {
			h.peerSend(FlagACK|FlagPSH, h.base(), []byte("hello"))
			h.take()
			for i := 0; i < 5; i++ {
				r := h.seg(FlagACK|FlagPSH, h.base(), []byte("hello"))
				r.Seq = h.peerNxt - 5
				h.inject(r)
				Expect(h.one().Ack).To(Equal(h.peerNxt))
			}
			Expect(h.s.Stats().AckSkippedSeq).To(BeZero())
		})

		It("applies to challenge ACKs before the stack-wide RFC 5961 limit, as Linux's tcp_send_challenge_ack does", func() {
			for i := 0; i < 10; i++ {
				h.inject(Repr{Seq: h.peerNxt + 100, Flags: FlagRST})
			}
			Expect(h.take()).To(HaveLen(1))
			st := h.s.Stats()
			Expect(st.ChallengeAcks).To(BeEquivalentTo(1))
			Expect(st.AckSkippedChallenge).To(BeEquivalentTo(9))
			Expect(st.Drops.ChallengeRateLimit).To(BeZero())
			h.advance(500 * time.Millisecond)
			h.inject(Repr{Seq: h.peerNxt + 100, Flags: FlagRST})
			Expect(h.take()).To(HaveLen(1))
		})

		It("sets no limit with invalid_ratelimit 0", func() {
			h = newHarness(tuned(func(c *Config) { c.InvalidRateLimit = 0 }))
			h.established(defaultPeer())
			h.take()
			for i := 0; i < 10; i++ {
				h.inject(Repr{Seq: h.peerNxt + 1<<30, Flags: FlagACK, Ack: h.base(), Window: 1000})
			}
			Expect(h.take()).To(HaveLen(10))
		})
	})

	Context("RSTs for segments with no connection, stack-wide (FreeBSD icmplim's model)", func() {
		It("sends at most rst_rate_limit a second, a bucket one second deep, and counts the rest", func() {
			h = newHarness(DefaultConfig()) // 200 a second
			const n = 10000
			for i := 0; i < n; i++ {
				h.now = time.Duration(i) * time.Millisecond // 10 s of SYNs to a closed port
				h.inject(Repr{Seq: Seq(i), Flags: FlagSYN, Window: 1000, SrcPort: uint16(1000 + i%5000)})
			}
			rsts := h.take()
			// A full bucket (200) and then 200 a second for 10 s.
			Expect(len(rsts)).To(BeNumerically(">=", 2000))
			Expect(len(rsts)).To(BeNumerically("<=", 2200))
			for _, r := range rsts {
				Expect(r.Flags & FlagRST).NotTo(BeZero())
			}
			st := h.s.Stats()
			Expect(st.RstRateLimited).To(BeEquivalentTo(n - len(rsts)))
			Expect(st.OutRsts).To(BeEquivalentTo(len(rsts)))
			Expect(st.Drops.NoSocket).To(BeEquivalentTo(n))
		})

		It("sends none with rst_rate_limit 0", func() {
			h = newHarness(tuned(func(c *Config) { c.RSTRateLimit = 0 }))
			h.inject(Repr{Seq: 1, Flags: FlagSYN, Window: 1000})
			h.none()
			Expect(h.s.Stats().RstRateLimited).To(BeEquivalentTo(1))
		})
	})
})
