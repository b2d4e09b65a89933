package tcp

import (
	"bytes"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

const segSize = 1448 // MSS 1460 less 12 bytes of timestamps

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

var _ = Describe("Data transfer", func() {
	var (
		h *harness
		c *Conn
	)
	S := func(i int) Seq { return h.base().Add(i * segSize) }

	Describe("retransmission timeout (RFC 6298)", func() {
		It("backs off exponentially from the min RTO up to the max RTO", func() {
			h = newHarness(tuned(func(c *Config) {
				c.MinRTO = 200 * time.Millisecond
				c.MaxRTO = time.Second
			}))
			c = h.established(defaultPeer())
			// The handshake measured 10 ms: RTO = 10 + 4*5 = 30 ms,
			// clamped to the 200 ms minimum.
			Expect(c.Info().RTO).To(Equal(200 * time.Millisecond))
			_, _ = c.Write([]byte("hello"))
			h.s.Poll(h.now)
			first := h.one()
			t0 := first.at
			h.advance(5 * time.Second)
			var gaps []time.Duration
			prev := t0
			for _, s := range h.take() {
				Expect(s.Seq).To(Equal(first.Seq))
				Expect(string(s.Payload)).To(Equal("hello"))
				gaps = append(gaps, s.at-prev)
				prev = s.at
			}
			Expect(gaps[:6]).To(Equal([]time.Duration{200 * time.Millisecond, 400 * time.Millisecond,
				800 * time.Millisecond, time.Second, time.Second, time.Second}))
			st := h.s.Stats()
			Expect(st.RtoTimeouts).To(BeNumerically(">=", 6))
			Expect(st.RetransSegs).To(BeEquivalentTo(len(gaps)))
			Expect(c.Info().Cwnd).To(Equal(segSize)) // loss window (RFC 5681 section 3.1)
		})
		It("sends pure ACKs with SND.MAX after a timeout rewinds SND.NXT, so the peer accepts them", func() {
			h = newHarness(tuned(func(c *Config) {
				c.MinRTO = 200 * time.Millisecond
				c.DelayedAck = false
			}))
			c = h.established(defaultPeer())
			_, _ = c.Write(make([]byte, 3*segSize))
			h.s.Poll(h.now)
			sent := h.take()
			Expect(sent).To(HaveLen(3))
			max := sent[2].Seq.Add(segSize)
			h.advance(200 * time.Millisecond) // the RTO: SND.NXT goes back to SND.UNA
			Expect(h.take()).NotTo(BeEmpty())
			// Data from the peer that acknowledges nothing new: our ACK of it
			// must carry SND.MAX, not the rewound SND.NXT.
			h.inject(h.seg(FlagACK|FlagPSH, sent[0].Seq, []byte("hi")))
			h.s.Poll(h.now)
			var ack *captured
			for _, s := range h.take() {
				if len(s.Payload) == 0 && s.Flags&FlagACK != 0 {
					ack = &s
				}
			}
			Expect(ack).NotTo(BeNil())
			Expect(ack.Seq).To(Equal(max))
		})

		It("follows SRTT + 4*RTTVAR above the minimum and gives up after max_retries", func() {
			h = newHarness(tuned(func(c *Config) {
				c.MinRTO = time.Millisecond
				c.MaxRetries = 3
			}))
			c = h.established(defaultPeer())
			Expect(c.Info().RTO).To(Equal(30 * time.Millisecond))
			_, _ = c.Write([]byte("x"))
			h.s.Poll(h.now)
			h.one()
			h.advance(10 * time.Second)
			out := h.take()
			Expect(out).To(HaveLen(3))
			Expect(out[0].at - h.now + 10*time.Second).To(Equal(30 * time.Millisecond))
			Expect(c.State()).To(Equal(StateClosed))
			Expect(c.Err()).To(MatchError(ErrTimeout))
		})
		It("restarts from a fresh RTT sample once data is acknowledged (Karn: no sample from a retransmission)", func() {
			h = newHarness(tuned(func(c *Config) { c.MinRTO = time.Millisecond }))
			c = h.established(defaultPeer())
			_, _ = c.Write([]byte("x"))
			h.s.Poll(h.now)
			h.one()
			h.advance(35 * time.Millisecond) // one retransmission at 30 ms
			Expect(h.take()).To(HaveLen(1))
			h.peerSend(FlagACK, h.base()+1, nil)
			// The ACK is ambiguous: SRTT must still be the handshake's.
			Expect(c.Info().SRTT).To(Equal(10 * time.Millisecond))
		})
	})

	It("fast-retransmits after three duplicate ACKs and recovers with NewReno (RFC 5681 section 3.2, RFC 6582)", func() {
		h = newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
		p := defaultPeer()
		p.sack = false
		c = h.established(p)
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		out := h.take()
		Expect(out).To(HaveLen(10)) // initial window of 10 segments
		h.advance(time.Millisecond)
		h.peerSend(FlagACK, S(1), nil) // segment 1 lost
		h.none()
		h.peerSend(FlagACK, S(1), nil)
		h.peerSend(FlagACK, S(1), nil)
		h.none()
		h.peerSend(FlagACK, S(1), nil)
		r := h.one()
		Expect(r.Seq).To(Equal(S(1)))
		Expect(r.Payload).To(HaveLen(segSize))
		st := h.s.Stats()
		Expect(st.DupAcks).To(BeEquivalentTo(3))
		Expect(st.FastRetransmits).To(BeEquivalentTo(1))
		Expect(st.RenoRecoveries).To(BeEquivalentTo(1))
		Expect(c.Info().InRecovery).To(BeTrue())
		// cwnd after the first ACK was 11 segments; ssthresh = flight/2.
		Expect(c.Info().Ssthresh).To(Equal(9 * segSize / 2))
		// Partial ACK: segment 3 also lost; NewReno retransmits it at once.
		h.peerSend(FlagACK, S(3), nil)
		r = h.one()
		Expect(r.Seq).To(Equal(S(3)))
		h.peerSend(FlagACK, S(10), nil)
		Expect(c.Info().InRecovery).To(BeFalse())
		Expect(h.s.Stats().RtoTimeouts).To(BeZero())
	})

	It("recovers several holes from the SACK scoreboard (RFC 2018, RFC 6675)", func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		h.advance(time.Millisecond)
		sack := func(ack Seq, blocks ...SACKBlock) []captured {
			r := h.seg(FlagACK, ack, nil)
			r.NumSACK = copy(r.SACK[:], blocks)
			h.inject(r)
			return h.take()
		}
		blk := func(a, b int) SACKBlock { return SACKBlock{S(a), S(b)} }
		// Segments 1, 3 and 5 are lost.
		Expect(sack(S(1))).To(BeEmpty())
		Expect(sack(S(1), blk(2, 3))).To(BeEmpty())
		Expect(sack(S(1), blk(4, 5), blk(2, 3))).To(BeEmpty())
		out := sack(S(1), blk(6, 7), blk(4, 5), blk(2, 3))
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(S(1)))
		Expect(h.s.Stats().SackRecoveries).To(BeEquivalentTo(1))
		out = sack(S(1), blk(6, 8), blk(4, 5), blk(2, 3))
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(S(3)))
		out = sack(S(1), blk(6, 9), blk(4, 5), blk(2, 3))
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(S(5)))
		Expect(sack(S(1), blk(6, 10), blk(4, 5), blk(2, 3))).To(BeEmpty())
		Expect(sack(S(3), blk(6, 10), blk(4, 5))).To(BeEmpty())
		Expect(sack(S(5), blk(6, 10))).To(BeEmpty())
		Expect(c.Info().InRecovery).To(BeTrue())
		Expect(sack(S(10))).To(BeEmpty())
		Expect(c.Info().InRecovery).To(BeFalse())
		st := h.s.Stats()
		Expect(st.RetransSegs).To(BeEquivalentTo(3))
		Expect(st.RtoTimeouts).To(BeZero())
	})

	It("scales windows both ways (RFC 7323 section 2)", func() {
		h = newHarness(tuned(func(c *Config) { c.RecvBuffer = 1 << 20 }))
		p := defaultPeer()
		p.ws = 2
		p.window = 1086 // 4344 bytes: three segments
		c = h.established(p)
		Expect(c.Info().SndWnd).To(Equal(3 * segSize))
		Expect(c.Info().RcvWscale).To(BeEquivalentTo(5)) // 1 MiB >> 5 = 32768
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(3))
		// Data from the peer: our ACK advertises free space >> 5.
		r := h.seg(FlagACK, S(0), pattern(1000))
		r.Window = 1086
		h.inject(r)
		h.peerNxt += 1000
		h.none() // delayed ACK
		h.advance(40 * time.Millisecond)
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(a.Window).To(BeEquivalentTo(((1 << 20) - 1000) >> 5))
		Expect(h.s.Stats().DelayedAcks).To(BeEquivalentTo(1))
	})

	It("probes a zero window with the persist timer and resumes when it opens (RFC 9293 section 3.8.6.1)", func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		r := h.seg(FlagACK, S(0), nil)
		r.Window = 0
		h.inject(r)
		_, _ = c.Write(pattern(5000))
		h.s.Poll(h.now)
		h.none()
		t0 := h.now
		h.advance(700 * time.Millisecond)
		probes := h.take()
		Expect(probes).To(HaveLen(2))
		for _, p := range probes {
			Expect(p.Seq).To(Equal(S(0)))
			Expect(p.Payload).To(HaveLen(1))
		}
		Expect(probes[0].at - t0).To(Equal(200 * time.Millisecond))
		Expect(probes[1].at - probes[0].at).To(Equal(400 * time.Millisecond))
		Expect(h.s.Stats().ZeroWindowProbes).To(BeEquivalentTo(2))
		// The window opens.
		h.inject(h.seg(FlagACK, S(0), nil))
		out := h.take()
		Expect(out).To(HaveLen(3))
		Expect(out[0].Seq).To(Equal(S(0)))
		// Nagle holds the small tail until the full segments are acked.
		h.inject(h.seg(FlagACK, S(3), nil))
		out = h.take()
		Expect(out).To(HaveLen(1))
		Expect(out[0].Payload).To(HaveLen(5000 - 3*segSize))
	})

	It("advertises a zero window when its buffer is full and reopens it when the application reads", func() {
		h = newHarness(tuned(func(c *Config) {
			c.RecvBuffer = 8 * segSize
			c.SendBuffer = 8 * segSize
		}))
		c = h.established(defaultPeer())
		for i := 0; i < 8; i++ {
			h.peerSend(FlagACK, S(0), pattern(segSize))
		}
		acks := h.take()
		Expect(acks[len(acks)-1].Window).To(BeZero())
		// A probe beyond the window is not accepted.
		h.peerSend(FlagACK, S(0), []byte{1})
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt - 1))
		Expect(a.Window).To(BeZero())
		h.peerNxt--
		buf := make([]byte, 4*segSize)
		n, _ := c.Read(buf)
		Expect(n).To(Equal(4 * segSize))
		h.s.Poll(h.now)
		upd := h.one()
		Expect(upd.Window).To(BeNumerically(">", 0))
	})

	It("rejects an old timestamp (PAWS, RFC 7323 section 5)", func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		r := h.seg(FlagACK, S(0), []byte("stale"))
		r.TSVal = h.peerTS - 100
		h.inject(r)
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(c.RecvBuffered()).To(BeZero())
		Expect(h.s.Stats().PawsRejected).To(BeEquivalentTo(1))
	})

	It("queues out-of-order data, ACKs at once with SACK blocks, and bounds the queue", func() {
		h = newHarness(tuned(func(c *Config) { c.MaxOOORanges = 2 }))
		c = h.established(defaultPeer())
		d := pattern(5 * 100)
		P := h.peerNxt
		send := func(i int) {
			r := h.seg(FlagACK, S(0), d[i*100:(i+1)*100])
			r.Seq = P.Add(i * 100)
			h.inject(r)
		}
		send(1)
		a := h.one()
		Expect(a.Ack).To(Equal(P))
		Expect(a.NumSACK).To(Equal(1))
		Expect(a.SACK[0]).To(Equal(SACKBlock{P + 100, P + 200}))
		send(3)
		a = h.one()
		Expect(a.NumSACK).To(Equal(2))
		Expect(a.SACK[0]).To(Equal(SACKBlock{P + 300, P + 400})) // most recent first
		send(4)                                                  // joins [300,400)
		h.take()
		Expect(h.s.Stats().OfoQueued).To(BeEquivalentTo(3))
		r := h.seg(FlagACK, S(0), []byte("zz"))
		r.Seq = P.Add(600)
		h.inject(r) // a third range: over the bound
		h.take()
		Expect(h.s.Stats().OfoDropped).To(BeEquivalentTo(1))
		send(0)
		a = h.one()
		Expect(a.Ack).To(Equal(P + 200))
		send(2)
		a = h.one()
		Expect(a.Ack).To(Equal(P + 500))
		Expect(a.NumSACK).To(BeZero())
		buf := make([]byte, 1000)
		n, _ := c.Read(buf)
		Expect(bytes.Equal(buf[:n], d)).To(BeTrue())
	})

	It("delays ACKs but acknowledges every second full segment (RFC 5681 section 4.2)", func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		h.peerSend(FlagACK, S(0), pattern(segSize))
		h.none()
		h.peerSend(FlagACK, S(0), pattern(segSize))
		Expect(h.one().Ack).To(Equal(h.peerNxt))
		h.peerSend(FlagACK, S(0), pattern(10))
		h.advance(39 * time.Millisecond)
		h.none()
		h.advance(time.Millisecond)
		Expect(h.one().Ack).To(Equal(h.peerNxt))
	})

	DescribeTable("Nagle's algorithm (RFC 896) and NoDelay",
		func(noDelay bool, wantBeforeAck int) {
			h = newHarness(DefaultConfig())
			c = h.established(defaultPeer())
			c.SetNoDelay(noDelay)
			_, _ = c.Write([]byte("first"))
			h.s.Poll(h.now)
			Expect(h.take()).To(HaveLen(1))
			_, _ = c.Write([]byte("second"))
			h.s.Poll(h.now)
			Expect(h.take()).To(HaveLen(wantBeforeAck))
			h.peerSend(FlagACK, S(0)+5, nil)
			Expect(h.take()).To(HaveLen(1 - wantBeforeAck))
		},
		Entry("Nagle holds a small segment while one is unacknowledged", false, 0),
		Entry("NoDelay sends it at once", true, 1),
	)

	It("sends keep-alive probes when idle and gives up after the count (RFC 1122 4.2.3.6)", func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		c.SetKeepAlive(true, 10*time.Second, time.Second, 3)
		h.s.Poll(h.now)
		t0 := h.now
		h.advance(10*time.Second + time.Millisecond)
		p := h.one()
		Expect(p.Seq).To(Equal(S(0) - 1))
		Expect(p.Payload).To(BeEmpty())
		Expect(p.at - t0).To(Equal(10 * time.Second))
		// An answer resets the count.
		h.peerSend(FlagACK, S(0), nil)
		h.none()
		h.advance(20 * time.Second)
		out := h.take()
		Expect(out).To(HaveLen(4)) // 3 probes then a RST
		Expect(out[3].Flags).To(Equal(FlagRST))
		Expect(c.Err()).To(MatchError(ErrTimeout))
		Expect(h.s.Stats().KeepaliveProbes).To(BeEquivalentTo(4))
	})

	It("answers data for a closed socket with RST and resets on Close with unread data", func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		h.peerSend(FlagACK|FlagPSH, S(0), []byte("unread"))
		h.take()
		Expect(c.Close()).To(Succeed())
		h.s.Poll(h.now)
		r := h.one()
		Expect(r.Flags).To(Equal(FlagRST))
		Expect(c.State()).To(Equal(StateClosed))
	})
})

var _ = Describe("SYN cookies (RFC 4987 section 3.6)", func() {
	It("answers a SYN flood with cookies and completes a valid cookie handshake", func() {
		h := newHarness(tuned(func(c *Config) { c.SynBacklog = 2 }))
		l, err := h.s.Listen(h.local, h.lport, 16)
		Expect(err).NotTo(HaveOccurred())
		for i := 0; i < 100; i++ {
			r := Repr{SrcPort: uint16(20000 + i), Seq: Seq(1000 * i), Flags: FlagSYN, Window: 65535, MSS: 1460,
				HasWScale: true, WScale: 7, SACKPermitted: true, HasTS: true, TSVal: 77}
			h.inject(r)
		}
		out := h.take()
		Expect(out).To(HaveLen(100))
		Expect(h.s.NumConns()).To(Equal(2))
		st := h.s.Stats()
		Expect(st.SynCookiesSent).To(BeEquivalentTo(98))
		// Complete the handshake of the 50th SYN from its cookie.
		ck := out[50]
		Expect(ck.DstPort).To(BeEquivalentTo(20050))
		h.advance(time.Second)
		h.inject(Repr{SrcPort: 20050, Seq: Seq(50000 + 1), Ack: ck.Seq + 1, Flags: FlagACK, Window: 1000,
			HasTS: true, TSVal: 78, TSEcr: ck.TSVal, Payload: []byte("GET /")})
		c, ok := l.Accept()
		Expect(ok).To(BeTrue())
		Expect(c.RemoteAddr().Port).To(BeEquivalentTo(20050))
		Expect(c.State()).To(Equal(StateEstablished))
		info := c.Info()
		Expect(info.MSS).To(Equal(1460 - 12))
		Expect(info.SndWscale).To(BeEquivalentTo(7))
		Expect(info.SACK).To(BeTrue())
		Expect(info.SndWnd).To(Equal(1000 << 7))
		buf := make([]byte, 10)
		n, _ := c.Read(buf)
		Expect(string(buf[:n])).To(Equal("GET /"))
		Expect(h.s.Stats().SynCookiesValid).To(BeEquivalentTo(1))
		// A forged ACK fails the check and is reset.
		h.s.Poll(h.now)
		h.take()
		h.inject(Repr{SrcPort: 20051, Seq: Seq(51000 + 1), Ack: out[51].Seq + 2, Flags: FlagACK, Window: 1000})
		r := h.one()
		Expect(r.Flags).To(Equal(FlagRST))
		Expect(h.s.Stats().SynCookiesFailed).To(BeEquivalentTo(1))
		// A cookie older than the allowed age fails too.
		h.advance(4 * cookieTick)
		h.take() // SYN-ACK retransmissions of the two half-open connections
		h.inject(Repr{SrcPort: 20052, Seq: Seq(52000 + 1), Ack: out[52].Seq + 1, Flags: FlagACK, Window: 1000})
		Expect(h.one().Flags).To(Equal(FlagRST))
		Expect(h.s.NumConns()).To(Equal(1)) // only the cookie connection
	})

	It("drops SYNs without cookies when they are disabled", func() {
		h := newHarness(tuned(func(c *Config) {
			c.SynBacklog = 1
			c.SynCookies = false
		}))
		_, err := h.s.Listen(h.local, h.lport, 16)
		Expect(err).NotTo(HaveOccurred())
		for i := 0; i < 5; i++ {
			h.inject(Repr{SrcPort: uint16(20000 + i), Seq: 1, Flags: FlagSYN, Window: 100})
		}
		Expect(h.take()).To(HaveLen(1))
		Expect(h.s.Stats().ListenDrops).To(BeEquivalentTo(4))
	})

	It("refuses connections beyond max_conns", func() {
		h := newHarness(tuned(func(c *Config) { c.MaxConns = 3 }))
		_, err := h.s.Listen(h.local, h.lport, 16)
		Expect(err).NotTo(HaveOccurred())
		for i := 0; i < 5; i++ {
			h.inject(Repr{SrcPort: uint16(20000 + i), Seq: 1, Flags: FlagSYN, Window: 100})
		}
		Expect(h.s.NumConns()).To(Equal(3))
		Expect(h.s.Stats().ConnLimitRefused).To(BeEquivalentTo(2))
	})
})
