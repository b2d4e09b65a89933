package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// tuned returns DefaultConfig with set applied: how specs change a few
// tunables and keep the rest at their defaults.
func tuned(set func(c *Config)) Config {
	c := DefaultConfig()
	set(&c)
	return c
}

var _ = Describe("Config: explicit values", func() {
	It("takes syn_retries 0 as no SYN retransmission: the connect fails at the first RTO", func() {
		h := newHarness(tuned(func(c *Config) { c.SynRetries = 0 }))
		c, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
		Expect(err).NotTo(HaveOccurred())
		Expect(h.one().Flags).To(Equal(FlagSYN))
		h.advance(time.Second - time.Millisecond)
		Expect(c.State()).To(Equal(StateSynSent))
		h.advance(10 * time.Second)
		h.none()
		Expect(c.State()).To(Equal(StateClosed))
		Expect(c.Err()).To(MatchError(ErrTimeout))
		st := h.s.Stats()
		Expect(st.AttemptFails).To(BeEquivalentTo(1))
		Expect(st.RetransSegs).To(BeZero())
	})

	It("takes synack_retries 0 as no SYN-ACK retransmission: the half-open connection goes at the first RTO", func() {
		h := newHarness(tuned(func(c *Config) { c.SynAckRetries = 0 }))
		_, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100, MSS: 1000})
		Expect(h.one().Flags).To(Equal(FlagSYN | FlagACK))
		h.advance(10 * time.Second)
		h.none()
		Expect(h.s.NumConns()).To(BeZero())
		Expect(h.s.Stats().ListenDrops).To(BeEquivalentTo(1))
	})

	It("takes max_retries 0 as no data retransmission: the connection is aborted at the first RTO", func() {
		h := newHarness(tuned(func(c *Config) { c.MaxRetries = 0 }))
		c := h.established(defaultPeer())
		Expect(c.Info().RTO).To(Equal(200 * time.Millisecond))
		_, _ = c.Write([]byte("x"))
		h.s.Poll(h.now)
		Expect(h.one().Payload).To(Equal([]byte("x")))
		h.advance(199 * time.Millisecond)
		Expect(c.State()).To(Equal(StateEstablished))
		h.advance(10 * time.Second)
		h.none()
		Expect(c.State()).To(Equal(StateClosed))
		Expect(c.Err()).To(MatchError(ErrTimeout))
		Expect(h.s.Stats().RetransTimeouts).To(BeEquivalentTo(1))
		Expect(h.s.Stats().RetransSegs).To(BeZero())
	})

	It("takes challenge_ack_limit 0 as no challenge ACKs (RFC 5961 section 7)", func() {
		h := newHarness(tuned(func(c *Config) { c.ChallengeAckLimit = 0 }))
		c := h.established(defaultPeer())
		h.inject(Repr{Seq: h.peerNxt + 100, Flags: FlagRST})
		h.none()
		Expect(c.State()).To(Equal(StateEstablished))
		st := h.s.Stats()
		Expect(st.ChallengeAcks).To(BeZero())
		Expect(st.Drops.ChallengeRateLimit).To(BeEquivalentTo(1))
	})

	It("takes syn_backlog 0 as no SYN queue: every SYN is answered with a cookie", func() {
		h := newHarness(tuned(func(c *Config) { c.SynBacklog = 0 }))
		_, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		syn := Repr{Seq: h.peerISS, Flags: FlagSYN}
		defaultPeer().apply(&syn, h)
		h.inject(syn)
		Expect(h.one().Flags).To(Equal(FlagSYN | FlagACK))
		Expect(h.s.Stats().SynCookiesSent).To(BeEquivalentTo(1))
		Expect(h.s.NumConns()).To(BeZero())
	})

	It("is not filled in by the engine: a zero Config is refused, naming its first key", func() {
		Expect(DefaultConfig().Validate()).To(Succeed())
		err := Config{}.Validate()
		Expect(err).To(MatchError(ContainSubstring("tcp config: mtu: 0 is outside [108, 65535]")))
		_, err = New(Config{}, nil, nil)
		Expect(err).To(MatchError(ContainSubstring("mtu")))
	})

	DescribeTable("refuses 0 where it means nothing, naming the key and the valid range",
		func(set func(c *Config), want string) {
			err := tuned(set).Validate()
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(HavePrefix("tcp config: "))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("max_ooo_ranges", func(c *Config) { c.MaxOOORanges = 0 }, "max_ooo_ranges: 0 must be at least 1"),
		Entry("max_conns", func(c *Config) { c.MaxConns = 0 }, "max_conns: 0 must be at least 1"),
		Entry("initial_window", func(c *Config) { c.InitialWindow = 0 }, "initial_window: 0 must be at least 1"),
		Entry("keepalive_count", func(c *Config) { c.KeepAliveCount = 0 }, "keepalive_count: 0 must be at least 1"),
		Entry("initial_rto", func(c *Config) { c.InitialRTO = 0 }, "initial_rto: 0s must be above 0s"),
		Entry("min_rto", func(c *Config) { c.MinRTO = 0 }, "min_rto: 0s must be above 0s"),
		Entry("max_rto", func(c *Config) { c.MaxRTO = 0 }, "max_rto: 0s must be above 0s"),
		Entry("msl", func(c *Config) { c.MSL = 0 }, "msl: 0s must be above 0s"),
		Entry("fin_wait2_timeout", func(c *Config) { c.FinWait2Timeout = 0 }, "fin_wait2_timeout: 0s must be above 0s"),
		Entry("delayed_ack_timeout", func(c *Config) { c.DelayedAckTimeout = 0 }, "delayed_ack_timeout: 0s must be above 0s"),
		Entry("keepalive_idle", func(c *Config) { c.KeepAliveIdle = 0 }, "keepalive_idle: 0s must be above 0s"),
		Entry("keepalive_interval", func(c *Config) { c.KeepAliveInterval = 0 }, "keepalive_interval: 0s must be above 0s"),
		Entry("timestamp_tick", func(c *Config) { c.TimestampTick = 0 }, "timestamp_tick: 0s is below 1us"),
		Entry("congestion_control", func(c *Config) { c.CongestionControl = "" }, `congestion_control: unknown congestion control ""`),
		Entry("a negative count", func(c *Config) { c.SynRetries = -1 }, "syn_retries: -1 must not be negative"),
	)
})
