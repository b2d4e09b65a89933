package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs that pin rules a wrong engine could otherwise break unnoticed:
// each one fails when the rule it names is removed or weakened (they were
// checked against those mutants by hand, see the issue "The seams"). They
// work at the wire level: segments in, segments out, plus the counters
// and Info() a user of the engine sees.

// rightEdge is the right edge of the receive window a segment we emitted
// advertises: SEG.ACK + SEG.WND << Rcv.Wind.Shift (RFC 7323 section 2.3).
func rightEdge(c *Conn, a captured) Seq {
	return a.Ack.Add(int(a.Window) << c.Info().RcvWscale)
}

var _ = Describe("Segment acceptability (RFC 9293 section 3.10.7.4)", func() {
	var (
		h    *harness
		c    *Conn
		P    Seq // RCV.NXT once the first 100 bytes arrived
		edge Seq // RCV.NXT + RCV.WND as last advertised
		data []byte
	)
	BeforeEach(func() {
		// 1 MiB: the first ACK's window (scaled by 2^5) then ends past
		// the SYN-ACK's, so it is the largest edge advertised and RCV.WND
		// is exactly what it says.
		h = newHarness(tuned(func(c *Config) {
			c.RecvBuffer = 1 << 20
			c.DelayedAck = false
		}))
		c = h.established(defaultPeer())
		data = pattern(400)
		h.peerSend(FlagACK, h.base(), data[:100])
		a := h.one()
		P = h.peerNxt
		Expect(a.Ack).To(Equal(P))
		edge = rightEdge(c, a)
		Expect(edge.Sub(P)).To(BeNumerically(">", 1000))
	})
	// at sends payload (or a bare ACK when n == 0) starting at seq; the
	// bytes are those of the stream at that offset when it lies in data.
	at := func(seq Seq, n int) {
		r := h.seg(FlagACK, h.base(), nil)
		r.Seq = seq
		if n > 0 {
			r.Payload = make([]byte, n)
			if o := seq.Sub(P - 100); o >= 0 && o+n <= len(data) {
				r.Payload = data[o : o+n]
			}
		}
		h.inject(r)
	}

	DescribeTable("accepts a segment if RCV.NXT =< SEG.SEQ < RCV.NXT+RCV.WND or RCV.NXT =< SEG.SEQ+SEG.LEN-1 < RCV.NXT+RCV.WND",
		func(start func() Seq, n int, acceptable bool, wantAck func() Seq, wantBuffered int) {
			before := h.s.Stats().Drops.OutOfWindow
			at(start(), n)
			out := h.take()
			if acceptable {
				Expect(h.s.Stats().Drops.OutOfWindow).To(Equal(before), "segments: %v", describe(out))
			} else {
				Expect(h.s.Stats().Drops.OutOfWindow).To(Equal(before+1), "segments: %v", describe(out))
			}
			if wantAck == nil {
				// An acceptable bare ACK is not answered.
				Expect(out).To(BeEmpty(), "segments: %v", describe(out))
			} else {
				// An unacceptable segment draws <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>.
				Expect(out).To(HaveLen(1), "segments: %v", describe(out))
				Expect(out[0].Flags).To(Equal(FlagACK))
				Expect(out[0].Ack).To(Equal(wantAck()))
			}
			Expect(c.RecvBuffered()).To(Equal(wantBuffered))
		},
		Entry("data wholly below RCV.NXT (an old duplicate): not acceptable",
			func() Seq { return P - 100 }, 100, false, func() Seq { return P }, 100),
		Entry("data starting below RCV.NXT whose last octet is inside the window (second clause): acceptable, the new part kept",
			func() Seq { return P - 50 }, 150, true, func() Seq { return P + 100 }, 200),
		Entry("data whose last octet is exactly RCV.NXT (second clause, left edge): acceptable, one new octet",
			func() Seq { return P - 99 }, 100, true, func() Seq { return P + 1 }, 101),
		Entry("data starting at RCV.NXT+RCV.WND: not acceptable",
			func() Seq { return edge }, 10, false, func() Seq { return P }, 100),
		Entry("data starting at RCV.NXT+RCV.WND-1 (first clause, right edge): acceptable, queued out of order",
			func() Seq { return edge - 1 }, 1, true, func() Seq { return P }, 100),
		Entry("a bare ACK at RCV.NXT+RCV.WND-1: acceptable",
			func() Seq { return edge - 1 }, 0, true, nil, 100),
		Entry("a bare ACK at RCV.NXT+RCV.WND: not acceptable",
			func() Seq { return edge }, 0, false, func() Seq { return P }, 100),
		Entry("a bare ACK at RCV.NXT-1: not acceptable",
			func() Seq { return P - 1 }, 0, false, func() Seq { return P }, 100),
	)

	It("keeps the bytes of a segment straddling RCV.NXT in order, once (second clause)", func() {
		at(P-50, 250)
		Expect(h.one().Ack).To(Equal(P + 200))
		buf := make([]byte, 1000)
		n, err := c.Read(buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(buf[:n]).To(Equal(data[:300]))
	})
})

var _ = Describe("Zero receive window (RFC 9293 section 3.10.7.4 special allowance)", func() {
	var (
		h *harness
		c *Conn
	)
	// With RCV.WND = 0 only a segment at exactly RCV.NXT is acceptable,
	// for its ACK and RST; without that allowance a connection with a
	// full receive buffer would ignore every ACK and could never finish
	// sending.
	BeforeEach(func() {
		h = newHarness(tuned(func(c *Config) { c.RecvBuffer = 8 * segSize }))
		c = h.established(defaultPeer())
		for i := 0; i < 8; i++ {
			h.peerSend(FlagACK, h.base(), pattern(segSize))
		}
		acks := h.take()
		Expect(acks[len(acks)-1].Window).To(BeZero())
		_, err := c.Write([]byte("ping"))
		Expect(err).NotTo(HaveOccurred())
		h.s.Poll(h.now)
		d := h.one()
		Expect(string(d.Payload)).To(Equal("ping"))
		Expect(d.Window).To(BeZero())
		Expect(c.Info().Unacked).To(Equal(4))
	})

	It("accepts a bare ACK at RCV.NXT: the data it acknowledges leaves the send buffer", func() {
		h.inject(h.seg(FlagACK, h.base()+4, nil))
		h.none()
		Expect(c.Info().Unacked).To(BeZero())
		Expect(c.SendBuffered()).To(BeZero())
		Expect(h.s.Stats().Drops.OutOfWindow).To(BeZero())
	})

	It("does not accept a bare ACK at any other sequence number, and answers it with an ACK", func() {
		r := h.seg(FlagACK, h.base()+4, nil)
		r.Seq = h.peerNxt + 1
		h.inject(r)
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(a.Window).To(BeZero())
		Expect(c.Info().Unacked).To(Equal(4))
		Expect(h.s.Stats().Drops.OutOfWindow).To(BeEquivalentTo(1))
	})

	It("takes the ACK of a data segment at RCV.NXT but not its data (a zero-window probe)", func() {
		h.inject(h.seg(FlagACK, h.base()+4, []byte{1}))
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(a.Window).To(BeZero())
		Expect(c.Info().Unacked).To(BeZero())
		Expect(c.RecvBuffered()).To(Equal(8 * segSize))
	})

	It("accepts an exact RST at RCV.NXT", func() {
		h.inject(Repr{Seq: h.peerNxt, Flags: FlagRST})
		Expect(c.State()).To(Equal(StateClosed))
		Expect(c.Err()).To(MatchError(ErrConnReset))
	})
})

var _ = Describe("The ACK that completes a passive open (RFC 9293 section 3.10.7.4 fifth, SYN-RECEIVED)", func() {
	var (
		h   *harness
		l   *Listener
		iss Seq
	)
	BeforeEach(func() {
		h = newHarness(DefaultConfig())
		var err error
		l, err = h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 1000})
		sa := h.one()
		Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
		iss = sa.Seq
	})
	ackWith := func(ack Seq) {
		h.inject(Repr{Seq: h.peerISS + 1, Ack: ack, Flags: FlagACK, Window: 1000})
	}

	DescribeTable("is acceptable only if SND.UNA < SEG.ACK =< SND.NXT; otherwise <SEQ=SEG.ACK><CTL=RST> and the connection stays half-open",
		func(offset int) {
			bad := iss.Add(offset)
			ackWith(bad)
			rst := h.one()
			Expect(rst.Flags).To(Equal(FlagRST))
			Expect(rst.Seq).To(Equal(bad))
			Expect(l.Pending()).To(BeZero())
			Expect(h.s.Stats().Drops.BadAck).To(BeEquivalentTo(1))
			Expect(h.s.NumConns()).To(Equal(1))
			// The right ACK still completes it.
			ackWith(iss + 1)
			h.none()
			c, ok := l.Accept()
			Expect(ok).To(BeTrue())
			Expect(c.State()).To(Equal(StateEstablished))
		},
		Entry("SEG.ACK = SND.UNA (acknowledges nothing)", 0),
		Entry("SEG.ACK = SND.NXT + 1 (acknowledges what was never sent)", 2),
		Entry("SEG.ACK far below SND.UNA", -1000),
		Entry("SEG.ACK far above SND.NXT", 1<<20),
	)

	It("enters ESTABLISHED on SEG.ACK = SND.NXT", func() {
		ackWith(iss + 1)
		h.none()
		c, ok := l.Accept()
		Expect(ok).To(BeTrue())
		Expect(c.State()).To(Equal(StateEstablished))
	})
})

var _ = Describe("Sender silly window avoidance (RFC 9293 section 3.8.6.2.1, RFC 1122 4.2.3.4)", func() {
	var (
		h *harness
		c *Conn
	)
	// The peer offers a 2000-byte window without scaling: Max(SND.WND) is
	// 2000, so a segment shorter than a full one goes out only when at
	// least Fs*Max(SND.WND) = 1000 bytes can be sent, or nothing is in
	// flight (no ACK would come to open the window further).
	BeforeEach(func() {
		h = newHarness(DefaultConfig())
		p := defaultPeer()
		p.ws = -1
		p.window = 2000
		c = h.established(p)
		Expect(c.Info().SndWnd).To(Equal(2000))
		_, err := c.Write(pattern(5000))
		Expect(err).NotTo(HaveOccurred())
		h.s.Poll(h.now)
		// One full segment; the 552 bytes left of the window wait.
		first := h.one()
		Expect(first.Payload).To(HaveLen(segSize))
	})
	ackWnd := func(ack Seq, wnd uint16) []captured {
		r := h.seg(FlagACK, ack, nil)
		r.Window = wnd
		h.inject(r)
		return h.take()
	}

	It("does not send a small segment into a window below half the largest one while data is in flight", func() {
		// The ACK of the first segment opens the window to 2000 again:
		// one full segment, and again the 552-byte remainder waits.
		out := ackWnd(h.base().Add(segSize), 2000)
		Expect(out).To(HaveLen(1), "segments: %v", describe(out))
		Expect(out[0].Seq).To(Equal(h.base().Add(segSize)))
		Expect(out[0].Payload).To(HaveLen(segSize))
	})

	It("sends once the usable window reaches half the largest window", func() {
		// Acknowledging 448 bytes moves the right edge to 2448: usable
		// window 1000 = Max(SND.WND)/2.
		out := ackWnd(h.base()+448, 2000)
		Expect(out).To(HaveLen(1), "segments: %v", describe(out))
		Expect(out[0].Seq).To(Equal(h.base().Add(segSize)))
		Expect(out[0].Payload).To(HaveLen(1000))
	})

	It("sends a small segment into a small window when nothing is in flight", func() {
		out := ackWnd(h.base().Add(segSize), 600)
		Expect(out).To(HaveLen(1), "segments: %v", describe(out))
		Expect(out[0].Payload).To(HaveLen(600))
	})
})

var _ = Describe("Karn's algorithm (RFC 6298 section 3)", func() {
	// The handshake measured 10 ms. Ten segments go out at t0; the ACK of
	// all of them comes 100 ms later. Without a retransmission that is an
	// RTT sample (SRTT = 7/8*10 + 1/8*100 ms); after a fast retransmission
	// of the timed segment it is ambiguous and must not be sampled.
	DescribeTable("takes no RTT sample from an ACK of a retransmitted segment",
		func(lose bool, wantSRTT time.Duration) {
			h := newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
			p := defaultPeer()
			p.sack = false
			c := h.established(p)
			Expect(c.Info().SRTT).To(Equal(10 * time.Millisecond))
			_, _ = c.Write(pattern(10 * segSize))
			h.s.Poll(h.now)
			Expect(h.take()).To(HaveLen(10))
			h.advance(time.Millisecond)
			if lose {
				for i := 0; i < 3; i++ {
					h.peerSend(FlagACK, h.base(), nil)
				}
				r := h.one()
				Expect(r.Seq).To(Equal(h.base())) // fast retransmit (RFC 5681 section 3.2)
			}
			h.advance(99 * time.Millisecond)
			h.none()
			h.peerSend(FlagACK, h.base().Add(10*segSize), nil)
			Expect(c.Info().Unacked).To(BeZero())
			Expect(c.Info().SRTT).To(Equal(wantSRTT))
		},
		Entry("no retransmission: sampled", false, (7*10*time.Millisecond+100*time.Millisecond)/8),
		Entry("the timed segment fast-retransmitted: not sampled", true, 10*time.Millisecond),
	)
})

var _ = Describe("Limited transmit (RFC 3042)", func() {
	It("sends one new segment on each of the first two duplicate ACKs, without changing cwnd", func() {
		h := newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
		p := defaultPeer()
		p.sack = false
		c := h.established(p)
		S := func(i int) Seq { return h.base().Add(i * segSize) }
		_, _ = c.Write(pattern(14 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10)) // the initial window
		h.advance(time.Millisecond)
		for i, want := range []Seq{S(10), S(11)} {
			h.peerSend(FlagACK, S(0), nil) // segment 0 lost
			out := h.take()
			Expect(out).To(HaveLen(1), "duplicate ACK %d: %v", i+1, describe(out))
			Expect(out[0].Seq).To(Equal(want))
			Expect(out[0].Payload).To(HaveLen(segSize))
			Expect(c.Info().Cwnd).To(Equal(10 * segSize))
		}
		// The third is fast retransmit; cwnd = ssthresh + 3 SMSS with
		// ssthresh = FlightSize/2 = 6 segments: no new data.
		h.peerSend(FlagACK, S(0), nil)
		out := h.take()
		Expect(out).To(HaveLen(1), "segments: %v", describe(out))
		Expect(out[0].Seq).To(Equal(S(0)))
		Expect(c.Info().Ssthresh).To(Equal(6 * segSize))
	})
})

var _ = Describe("Congestion window growth only while cwnd-limited (RFC 7661 section 4, Linux tcp_is_cwnd_limited)", func() {
	// In slow start the flow counts as cwnd-limited when 2*FlightSize +
	// 2*SMSS >= cwnd: with the initial window of 10 segments, a flight of
	// 4 segments. An application- or receiver-limited flow must not
	// inflate cwnd.
	DescribeTable("grows cwnd on an ACK only when the flight it acknowledges filled enough of cwnd",
		func(flight int, want int) {
			h := newHarness(tuned(func(c *Config) { c.NoDelay = true }))
			c := h.established(defaultPeer())
			Expect(c.Info().Cwnd).To(Equal(10 * segSize))
			_, _ = c.Write(pattern(flight))
			h.s.Poll(h.now)
			h.take()
			Expect(c.Info().Unacked).To(Equal(flight))
			h.peerSend(FlagACK, h.base().Add(flight), nil)
			Expect(c.Info().Cwnd).To(Equal(want))
		},
		Entry("flight 4 segments: limited, slow start adds min(acked, 2 SMSS)", 4*segSize, 12*segSize),
		Entry("flight one byte less: not limited, unchanged", 4*segSize-1, 10*segSize),
	)

	It("keeps cwnd through many round trips of an application that writes little", func() {
		h := newHarness(tuned(func(c *Config) { c.NoDelay = true }))
		c := h.established(defaultPeer())
		sent := 0
		for i := 0; i < 50; i++ {
			_, _ = c.Write(pattern(100))
			h.s.Poll(h.now)
			Expect(h.take()).To(HaveLen(1))
			sent += 100
			h.advance(time.Millisecond)
			h.peerSend(FlagACK, h.base().Add(sent), nil)
		}
		Expect(c.Info().Unacked).To(BeZero())
		Expect(c.Info().Cwnd).To(Equal(10 * segSize))
	})
})

var _ = Describe("The right edge of the receive window never retreats (RFC 9293 section 3.8.6.2.2, RFC 7323 section 2.4)", func() {
	It("accepts data up to the largest right edge advertised, even after the scaled window field rounded it down", func() {
		h := newHarness(tuned(func(c *Config) {
			c.RecvBuffer = 1 << 20
			c.DelayedAck = false
		}))
		c := h.established(defaultPeer())
		Expect(c.Info().RcvWscale).To(BeEquivalentTo(5)) // 32-byte granularity
		var maxEdge, last Seq
		first := true
		note := func(a captured) {
			e := rightEdge(c, a)
			if first || e.GreaterThan(maxEdge) {
				maxEdge = e
			}
			first = false
			last = e
		}
		// 1000 bytes, then 10: the second ACK's window, rounded down to
		// 32 bytes, ends below the first one's edge.
		h.peerSend(FlagACK, h.base(), pattern(1000))
		note(h.one())
		h.peerSend(FlagACK, h.base(), pattern(10))
		note(h.one())
		Expect(last.LessThan(maxEdge)).To(BeTrue(), "the scenario needs a rounded-down window: last %d, max %d", last, maxEdge)
		Expect(maxEdge.Sub(last)).To(BeNumerically("<", 32), "the field may round down by less than 2^Rcv.Wind.Shift only")
		// The peer may send up to the largest edge it was offered.
		r := h.seg(FlagACK, h.base(), []byte{42})
		r.Seq = maxEdge - 1
		h.inject(r)
		a := h.one()
		Expect(h.s.Stats().Drops.OutOfWindow).To(BeZero())
		Expect(h.s.Stats().OfoQueued).To(BeEquivalentTo(1))
		Expect(a.NumSACK).To(Equal(1))
		Expect(a.SACK[0]).To(Equal(SACKBlock{Start: maxEdge - 1, End: maxEdge}))
	})

	It("never advertises an edge left of the last one while the application reads a little at a time", func() {
		h := newHarness(tuned(func(c *Config) { c.RecvBuffer = 8 * segSize }))
		c := h.established(defaultPeer())
		Expect(c.Info().RcvWscale).To(BeZero())
		var maxEdge Seq
		check := func(out []captured) {
			for _, a := range out {
				e := rightEdge(c, a)
				Expect(e.GreaterEq(maxEdge)).To(BeTrue(), "edge %d advertised after %d: %v", e, maxEdge, describe(out))
				maxEdge = e
			}
		}
		for i := 0; i < 8; i++ {
			h.peerSend(FlagACK, h.base(), pattern(segSize))
			check(h.take())
		}
		Expect(maxEdge).To(Equal(h.peerNxt)) // the window is closed
		// The application reads 1000 bytes: less than an MSS, so the
		// window stays closed (receiver SWS avoidance). A zero-window
		// probe's octet then arrives; the engine keeps it in the freed
		// room (whether it should is not this spec's business), which
		// puts RCV.NXT past the edge last advertised: the answer must
		// still advertise a closed window, not a negative one.
		n, _ := c.Read(make([]byte, 1000))
		Expect(n).To(Equal(1000))
		h.s.Poll(h.now)
		check(h.take())
		h.peerSend(FlagACK, h.base(), []byte{7})
		out := h.take()
		check(out)
		Expect(out).To(HaveLen(1))
		Expect(out[0].Window).To(BeZero())
		// Reading the rest opens it again, to the right.
		buf := make([]byte, 8*segSize)
		for {
			if k, _ := c.Read(buf); k == 0 {
				break
			}
		}
		h.s.Poll(h.now)
		out = h.take()
		Expect(out).To(HaveLen(1))
		check(out)
		Expect(out[0].Window).To(BeNumerically(">", 0))
	})
})
