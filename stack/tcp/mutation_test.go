package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs written for the mutants that survived .ci/mutate-tcp (see the
// issue "The seams"): each pins a rule of the RFCs the suite did not, at
// the wire level where it can.

// timeWaitConn opens a passive connection (its listener stays open),
// closes it from our side first and returns it in TIME-WAIT.
func timeWaitConn(h *harness) *Conn {
	c := h.established(defaultPeer())
	Expect(c.CloseWrite()).To(Succeed())
	h.s.Poll(h.now)
	Expect(h.one().Flags).To(Equal(FlagFIN | FlagACK))
	h.peerSend(FlagACK, h.base()+1, nil)
	h.peerSend(FlagFIN|FlagACK, h.base()+1, nil)
	Expect(h.one().Flags).To(Equal(FlagACK))
	Expect(c.State()).To(Equal(StateTimeWait))
	return c
}

var _ = Describe("A SYN in TIME-WAIT (RFC 9293 section 3.10.7.4 note, RFC 6191)", func() {
	var (
		h *harness
		c *Conn
	)
	BeforeEach(func() {
		h = newHarness(DefaultConfig())
		c = timeWaitConn(h)
	})

	It("reopens the connection when its sequence number is above RCV.NXT and a listener is there", func() {
		isn := h.peerNxt + 100000
		h.inject(Repr{Seq: isn, Flags: FlagSYN, Window: 1000, MSS: 1460})
		sa := h.one()
		Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
		Expect(sa.Ack).To(Equal(isn + 1))
		Expect(c.State()).To(Equal(StateClosed)) // the old incarnation is gone
		Expect(h.s.NumConns()).To(Equal(1))      // the new one is half-open
	})

	DescribeTable("does not reopen it otherwise: the TIME-WAIT connection answers with an ACK and stays",
		func(r func() Repr) {
			h.inject(r())
			a := h.one()
			Expect(a.Flags).To(Equal(FlagACK))
			Expect(a.Ack).To(Equal(h.peerNxt))
			Expect(c.State()).To(Equal(StateTimeWait))
			Expect(h.s.NumConns()).To(Equal(1))
		},
		Entry("a SYN at or below RCV.NXT", func() Repr { return Repr{Seq: h.peerNxt - 1000, Flags: FlagSYN, Window: 1000} }),
		Entry("a SYN-ACK above RCV.NXT", func() Repr {
			return Repr{Seq: h.peerNxt + 100000, Ack: h.base() + 1, Flags: FlagSYN | FlagACK, Window: 1000}
		}),
		Entry("a SYN above RCV.NXT once the listener is closed", func() Repr {
			for _, l := range h.s.listeners {
				l.Close()
			}
			return Repr{Seq: h.peerNxt + 100000, Flags: FlagSYN, Window: 1000}
		}),
	)

	It("does not reopen it for a segment without SYN above RCV.NXT", func() {
		r := h.seg(FlagACK, h.base()+1, []byte("late"))
		r.Seq = h.peerNxt + 100
		h.inject(r)
		Expect(c.State()).To(Equal(StateTimeWait))
		Expect(h.s.NumConns()).To(Equal(1))
		for _, s := range h.take() {
			Expect(s.Flags & FlagSYN).To(BeZero())
		}
	})
})

var _ = Describe("TS.Recent (RFC 7323 section 4.3)", func() {
	var (
		h *harness
		c *Conn
	)
	BeforeEach(func() {
		h = newHarness(tuned(func(c *Config) { c.DelayedAck = false }))
		c = h.established(defaultPeer())
	})

	It("takes SEG.TSval of a segment at Last.ACK.sent, and echoes it", func() {
		r := h.seg(FlagACK, h.base(), []byte("abc"))
		Expect(r.Seq).To(Equal(c.lastAckSent))
		r.TSVal = h.peerTS + 50
		h.inject(r)
		h.peerNxt += 3
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(a.TSEcr).To(Equal(h.peerTS + 50))
	})

	It("does not take it from a segment beyond Last.ACK.sent (out of order): the ACK echoes the older one", func() {
		r := h.seg(FlagACK, h.base(), []byte("abc"))
		first := r.TSVal
		h.inject(r)
		h.peerNxt += 3
		Expect(h.one().TSEcr).To(Equal(first))
		ooo := h.seg(FlagACK, h.base(), []byte("xyz"))
		ooo.Seq = h.peerNxt + 10
		ooo.TSVal = first + 100
		h.inject(ooo)
		a := h.one()
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(a.NumSACK).To(Equal(1))
		Expect(a.TSEcr).To(Equal(first))
	})
})

var _ = Describe("A listener closed during the handshake", func() {
	It("resets the connection when the handshake's ACK arrives, leaving nothing established", func() {
		h := newHarness(DefaultConfig())
		l, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 1000})
		sa := h.one()
		l.Close()
		h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 1000})
		rst := h.one()
		Expect(rst.Flags).To(Equal(FlagRST))
		Expect(rst.Seq).To(Equal(sa.Seq + 1))
		Expect(h.s.NumConns()).To(BeZero())
		Expect(h.s.Stats().CurrEstab).To(BeZero())
		Expect(h.s.Poll(h.now)).To(Equal(NoDeadline))
	})
})

var _ = Describe("Text and FIN after the peer's FIN (RFC 9293 section 3.10.7.4 seventh and eighth)", func() {
	var (
		h *harness
		c *Conn
	)
	BeforeEach(func() {
		h = newHarness(tuned(func(c *Config) { c.DelayedAck = false }))
		c = h.established(defaultPeer())
		h.peerSend(FlagFIN|FlagACK, h.base(), nil)
		h.take()
		Expect(c.State()).To(Equal(StateCloseWait))
	})

	It("ignores segment text in CLOSE-WAIT: nothing queued, nothing sent", func() {
		h.inject(h.seg(FlagACK|FlagPSH, h.base(), []byte("after the FIN")))
		h.none()
		Expect(c.RecvBuffered()).To(BeZero())
	})

	It("acknowledges a FIN in CLOSE-WAIT and stays there", func() {
		h.inject(h.seg(FlagFIN|FlagACK, h.base(), nil))
		a := h.one()
		Expect(a.Flags).To(Equal(FlagACK))
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(c.State()).To(Equal(StateCloseWait))
	})
})

var _ = Describe("A RST in SYN-RECEIVED (RFC 9293 section 3.10.7.4 second)", func() {
	It("refuses an active open that came from SYN-SENT (simultaneous open)", func() {
		h := newHarness(DefaultConfig())
		c, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
		Expect(err).NotTo(HaveOccurred())
		h.one()
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535, MSS: 1460})
		Expect(h.one().Flags).To(Equal(FlagSYN | FlagACK))
		Expect(c.State()).To(Equal(StateSynReceived))
		h.inject(Repr{Seq: h.peerISS + 1, Flags: FlagRST})
		Expect(c.State()).To(Equal(StateClosed))
		Expect(c.Err()).To(MatchError(ErrConnRefused))
		Expect(h.s.Stats().AttemptFails).To(BeEquivalentTo(1))
	})

	It("returns a passive open to LISTEN without counting a failed attempt", func() {
		h := newHarness(DefaultConfig())
		_, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		h.one()
		h.inject(Repr{Seq: h.peerISS + 1, Flags: FlagRST})
		h.none()
		Expect(h.s.NumConns()).To(BeZero())
		Expect(h.s.Stats().AttemptFails).To(BeZero())
	})
})

var _ = Describe("SACK blocks on a connection that did not negotiate SACK (RFC 2018 section 2)", func() {
	It("ignores them", func() {
		h := newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
		p := defaultPeer()
		p.sack = false
		c := h.established(p)
		Expect(c.Info().SACK).To(BeFalse())
		_, _ = c.Write(pattern(4 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(4))
		r := h.seg(FlagACK, h.base(), nil)
		r.NumSACK = 1
		r.SACK[0] = SACKBlock{Start: h.base().Add(segSize), End: h.base().Add(4 * segSize)}
		h.inject(r)
		Expect(c.Info().SACKedBytes).To(BeZero())
		Expect(h.s.Stats().DupAcks).To(BeEquivalentTo(1)) // a plain duplicate ACK
	})
})

var _ = Describe("Duplicate ACKs (RFC 5681 section 2) and a closed window", func() {
	It("does not count repeated ACKs of a zero window as duplicates: flow control is not loss", func() {
		h := newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
		p := defaultPeer()
		p.sack = false
		c := h.established(p)
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		zero := func(ack Seq) {
			r := h.seg(FlagACK, ack, nil)
			r.Window = 0
			h.inject(r)
		}
		zero(h.base().Add(segSize))
		for i := 0; i < 4; i++ {
			zero(h.base().Add(segSize))
		}
		h.none()
		Expect(c.Info().SndWnd).To(BeZero())
		Expect(h.s.Stats().DupAcks).To(BeZero())
		Expect(h.s.Stats().FastRetransmits).To(BeZero())
		Expect(c.Info().InRecovery).To(BeFalse())
	})
})

var _ = Describe("RTT timing (RFC 6298 section 3, one timed segment per round trip)", func() {
	It("samples only when the ACK covers the timed segment, not when it stops right before it", func() {
		h := newHarness(tuned(func(c *Config) { c.NoDelay = true }))
		c := h.established(defaultPeer())
		Expect(c.Info().SRTT).To(Equal(10 * time.Millisecond))
		write := func() {
			_, _ = c.Write(pattern(100))
			h.s.Poll(h.now)
			Expect(h.take()).To(HaveLen(1))
		}
		write() // A, timed
		h.advance(time.Millisecond)
		write() // B, not timed: A's timing runs
		h.advance(9 * time.Millisecond)
		h.peerSend(FlagACK, h.base()+100, nil) // A acked after 10 ms: a sample of 10 ms
		Expect(c.Info().SRTT).To(Equal(10 * time.Millisecond))
		Expect(c.Info().RTTVar).To(Equal(3750 * time.Microsecond))
		write() // C, timed from now
		h.advance(time.Millisecond)
		h.peerSend(FlagACK, h.base()+200, nil) // B acked: SEG.ACK is C's first octet, C is not acknowledged
		Expect(c.Info().SRTT).To(Equal(10 * time.Millisecond))
		Expect(c.Info().RTTVar).To(Equal(3750 * time.Microsecond))
		h.advance(19 * time.Millisecond)
		h.peerSend(FlagACK, h.base()+300, nil) // C acked after 20 ms
		Expect(c.Info().SRTT).To(Equal((7*10*time.Millisecond + 20*time.Millisecond) / 8))
	})
})

var _ = Describe("NewReno fast recovery (RFC 5681 section 3.2, RFC 6582)", func() {
	var (
		h *harness
		c *Conn
		S func(int) Seq
	)
	BeforeEach(func() {
		h = newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
		p := defaultPeer()
		p.sack = false
		c = h.established(p)
		S = func(i int) Seq { return h.base().Add(i * segSize) }
	})
	dup := func() []captured {
		h.peerSend(FlagACK, S(0), nil)
		return h.take()
	}

	It("adds back one SMSS on a partial ACK that acknowledges exactly one SMSS (RFC 6582 section 3.2 step 4)", func() {
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		dup()
		dup()
		Expect(dup()).To(HaveLen(1)) // fast retransmit of segment 0
		// ssthresh = FlightSize/2 = 5 segments, cwnd = ssthresh + 3.
		Expect(c.Info().Cwnd).To(Equal(8 * segSize))
		// Segment 1 was lost too: the ACK of the retransmission is
		// partial and covers one SMSS.
		h.peerSend(FlagACK, S(1), nil)
		r := h.one()
		Expect(r.Seq).To(Equal(S(1)))
		Expect(c.Info().InRecovery).To(BeTrue())
		Expect(c.Info().Cwnd).To(Equal(8*segSize - segSize + segSize))
	})

	It("inflates cwnd by one SMSS per further duplicate ACK, and sends new data once it allows (RFC 5681 section 3.2 step 4)", func() {
		_, _ = c.Write(pattern(20 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		Expect(dup()).To(HaveLen(1)) // limited transmit: segment 10
		Expect(dup()).To(HaveLen(1)) // segment 11
		out := dup()                 // fast retransmit
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(S(0)))
		// FlightSize 12 segments: ssthresh 6, cwnd 9; 12 outstanding.
		Expect(c.Info().Cwnd).To(Equal(9 * segSize))
		for i := 0; i < 3; i++ {
			Expect(dup()).To(BeEmpty())
		}
		Expect(c.Info().Cwnd).To(Equal(12 * segSize))
		out = dup() // cwnd 13 > 12 outstanding
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(S(12)))
	})

	It("does not start a fast retransmit on duplicate ACKs that do not cover recover after a timeout (RFC 6582 section 3.2 step 2)", func() {
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		h.advance(c.Info().RTO)
		rto := h.take()
		Expect(rto).To(HaveLen(1))
		Expect(rto[0].Seq).To(Equal(S(0)))
		// Duplicates from the first flight arrive: recover is SND.MAX
		// of the timeout, S(10), and SND.UNA is below it.
		for i := 0; i < 2; i++ {
			for _, s := range dup() {
				Expect(s.Seq).NotTo(Equal(S(0)), "segment 0 sent again")
			}
		}
		// The third is no fast retransmit, and no limited transmit
		// either (that is for the first two): cwnd is one segment and
		// three are out.
		out := dup()
		Expect(out).To(BeEmpty(), "segments: %v", describe(out))
		Expect(h.s.Stats().FastRetransmits).To(BeZero())
		Expect(c.Info().InRecovery).To(BeFalse())
	})

	It("sends no limited-transmit segments in recovery: after a partial ACK only the inflated cwnd counts", func() {
		_, _ = c.Write(pattern(20 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		dup()
		dup()
		Expect(dup()).To(HaveLen(1)) // fast retransmit; cwnd 9, 12 outstanding
		// Segments 0 and 1 arrived, 2 is lost too: partial ACK,
		// retransmission of 2, cwnd 9 - 2 + 1 = 8 with 10 outstanding.
		h.peerSend(FlagACK, S(2), nil)
		out := h.take()
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(S(2)))
		Expect(c.Info().Cwnd).To(Equal(8 * segSize))
		ack2 := func() []captured {
			h.peerSend(FlagACK, S(2), nil)
			return h.take()
		}
		Expect(ack2()).To(BeEmpty()) // cwnd 9
		Expect(ack2()).To(BeEmpty()) // cwnd 10
		out = ack2()                 // cwnd 11 > 10 outstanding
		Expect(out).To(HaveLen(1), "segments: %v", describe(out))
		Expect(out[0].Seq).To(Equal(S(12)))
	})
})

var _ = Describe("Congestion avoidance grows only while cwnd-limited (RFC 7661 section 4, Linux tcp_is_cwnd_limited)", func() {
	// After a SACK recovery cwnd = ssthresh = 5 segments: congestion
	// avoidance, where the flow is cwnd-limited when FlightSize + 3*SMSS
	// >= cwnd, a flight of 2 segments.
	DescribeTable("adds one SMSS per cwnd of acked data only when the flights were large enough",
		func(flight int, want int) {
			h := newHarness(tuned(func(c *Config) {
				c.CongestionControl = CCNewReno
				c.NoDelay = true
			}))
			c := h.established(defaultPeer())
			S := func(i int) Seq { return h.base().Add(i * segSize) }
			_, _ = c.Write(pattern(10 * segSize))
			h.s.Poll(h.now)
			Expect(h.take()).To(HaveLen(10))
			for k := 2; k <= 4; k++ {
				r := h.seg(FlagACK, S(0), nil)
				r.NumSACK = 1
				r.SACK[0] = SACKBlock{Start: S(1), End: S(k)}
				h.inject(r)
			}
			Expect(c.Info().InRecovery).To(BeTrue())
			h.take()
			h.peerSend(FlagACK, S(10), nil)
			Expect(c.Info().InRecovery).To(BeFalse())
			Expect(c.Info().Cwnd).To(Equal(5 * segSize))
			Expect(c.Info().Ssthresh).To(Equal(5 * segSize))
			sent := 10 * segSize
			for round := 0; round < 3; round++ {
				_, _ = c.Write(pattern(flight))
				h.s.Poll(h.now)
				h.take()
				sent += flight
				h.peerSend(FlagACK, h.base().Add(sent), nil)
			}
			Expect(c.Info().Cwnd).To(Equal(want))
		},
		Entry("flights of 2 segments: limited, one SMSS after a cwnd's worth", 2*segSize, 6*segSize),
		Entry("flights one byte short: not limited, unchanged", 2*segSize-1, 5*segSize),
	)
})

var _ = Describe("The end of the receive buffer", func() {
	It("takes a FIN whose data exactly fills the buffer", func() {
		h := newHarness(tuned(func(c *Config) { c.RecvBuffer = 8 * segSize }))
		c := h.established(defaultPeer())
		for i := 0; i < 7; i++ {
			h.peerSend(FlagACK, h.base(), pattern(segSize))
		}
		h.peerSend(FlagFIN|FlagACK, h.base(), pattern(segSize))
		acks := h.take()
		Expect(acks).NotTo(BeEmpty())
		Expect(acks[len(acks)-1].Ack).To(Equal(h.peerNxt))
		Expect(c.State()).To(Equal(StateCloseWait))
		Expect(c.RecvBuffered()).To(Equal(8 * segSize))
		Expect(h.s.Stats().Drops.RecvBufferFull).To(BeZero())
	})

	It("holds no buffer memory when a direct receiver took every byte", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		got := 0
		c.SetDirectReceiver(func(p []byte) int { got += len(p); return len(p) })
		h.peerSend(FlagACK|FlagPSH, h.base(), pattern(100))
		Expect(got).To(Equal(100))
		Expect(c.RecvBuffered()).To(BeZero())
		Expect(c.rcvBuf.buf).To(BeNil())
	})
})

var _ = Describe("A FIN and the congestion window", func() {
	It("waits for room in cwnd like data does when it goes alone (it takes sequence space)", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10)) // the initial window, full
		// The FIN alone: no room in cwnd until an ACK.
		Expect(c.CloseWrite()).To(Succeed())
		h.s.Poll(h.now)
		h.none()
		h.peerSend(FlagACK, h.base().Add(segSize), nil)
		fin := h.one()
		Expect(fin.Flags).To(Equal(FlagFIN | FlagACK))
		Expect(fin.Seq).To(Equal(h.base().Add(10 * segSize)))
	})
})

var _ = Describe("The PSH bit (RFC 9293 section 3.9.1 SEND)", func() {
	It("is set on the segment that empties what the application wrote, and only there", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		_, _ = c.Write(pattern(3 * segSize))
		h.s.Poll(h.now)
		out := h.take()
		Expect(out).To(HaveLen(3))
		Expect(out[0].Flags).To(Equal(FlagACK))
		Expect(out[1].Flags).To(Equal(FlagACK))
		Expect(out[2].Flags).To(Equal(FlagACK | FlagPSH))
	})
})

var _ = Describe("The listener's queues (Linux's SYN queue and accept queue)", func() {
	var (
		h *harness
		l *Listener
	)
	open := func(port uint16) captured {
		h.inject(Repr{SrcPort: port, Seq: h.peerISS, Flags: FlagSYN, Window: 1000})
		return h.one()
	}
	complete := func(port uint16, sa captured) {
		h.inject(Repr{SrcPort: port, Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 1000})
	}

	It("frees a half-open connection's place in the SYN queue when it is reset", func() {
		h = newHarness(tuned(func(c *Config) { c.SynBacklog = 1 }))
		var err error
		l, err = h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		open(30001)
		h.inject(Repr{SrcPort: 30001, Seq: h.peerISS + 1, Flags: FlagRST})
		Expect(h.s.NumConns()).To(BeZero())
		sa := open(30002)
		Expect(h.s.Stats().SynCookiesSent).To(BeZero(), "the SYN queue should have room again")
		Expect(h.s.NumConns()).To(Equal(1))
		complete(30002, sa)
		Expect(l.Pending()).To(Equal(1))
	})

	It("takes a connection reset before Accept out of the accept queue, keeping the others in order", func() {
		h = newHarness(DefaultConfig())
		var err error
		l, err = h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		for _, p := range []uint16{30001, 30002, 30003} {
			complete(p, open(p))
		}
		Expect(l.Pending()).To(Equal(3))
		h.inject(Repr{SrcPort: 30001, Seq: h.peerISS + 1, Flags: FlagRST})
		Expect(l.Pending()).To(Equal(2))
		for _, want := range []uint16{30002, 30003} {
			c, ok := l.Accept()
			Expect(ok).To(BeTrue())
			Expect(c.RemoteAddr().Port).To(Equal(want))
			Expect(c.State()).To(Equal(StateEstablished))
		}
		_, ok := l.Accept()
		Expect(ok).To(BeFalse())
	})

	It("drops a SYN while the accept queue is full (Linux ListenOverflows) and answers it once there is room", func() {
		h = newHarness(DefaultConfig())
		var err error
		l, err = h.s.Listen(h.local, h.lport, 1)
		Expect(err).NotTo(HaveOccurred())
		complete(30001, open(30001))
		Expect(l.Pending()).To(Equal(1))
		h.inject(Repr{SrcPort: 30002, Seq: h.peerISS, Flags: FlagSYN, Window: 1000})
		h.none()
		Expect(h.s.Stats().ListenOverflows).To(BeEquivalentTo(1))
		Expect(h.s.Stats().Drops.AcceptQueueFull).To(BeEquivalentTo(1))
		_, ok := l.Accept()
		Expect(ok).To(BeTrue())
		Expect(open(30002).Flags).To(Equal(FlagSYN | FlagACK))
	})
})

var _ = Describe("SYN cookie connections (RFC 4987 section 3.6)", func() {
	var (
		h        *harness
		l        *Listener
		halfOpen captured // the SYN-ACK of the connection from port 20000
	)
	const port = 20001
	// cookie fills the SYN queue (SynBacklog 1) with a half-open
	// connection from port 20000, then sends syn from port 20001 and
	// returns the cookie SYN-ACK that answers it.
	cookie := func(syn Repr) captured {
		h.inject(Repr{SrcPort: 20000, Seq: 1, Flags: FlagSYN, Window: 1000})
		halfOpen = h.one()
		Expect(halfOpen.Flags).To(Equal(FlagSYN | FlagACK))
		syn.SrcPort, syn.Flags = port, FlagSYN
		h.inject(syn)
		ck := h.one()
		Expect(ck.Flags).To(Equal(FlagSYN | FlagACK))
		Expect(h.s.Stats().SynCookiesSent).To(BeEquivalentTo(1))
		return ck
	}
	fullSYN := func() Repr {
		return Repr{Seq: 5000, Window: 1000, MSS: 1460, HasWScale: true, WScale: 7, SACKPermitted: true, HasTS: true, TSVal: 77}
	}
	ackOf := func(ck captured, flags Flags, payload []byte) Repr {
		r := Repr{SrcPort: port, Seq: 5001, Ack: ck.Seq + 1, Flags: flags, Window: 1000, Payload: payload}
		if ck.HasTS {
			r.HasTS, r.TSVal, r.TSEcr = true, 78, ck.TSVal
		}
		return r
	}
	accept := func() *Conn {
		for {
			c, ok := l.Accept()
			Expect(ok).To(BeTrue())
			if c.RemoteAddr().Port == port {
				return c
			}
		}
	}
	listen := func(cfg Config, backlog int) {
		cfg.SynBacklog = 1
		h = newHarness(cfg)
		var err error
		l, err = h.s.Listen(h.local, h.lport, backlog)
		Expect(err).NotTo(HaveOccurred())
	}

	It("echoes only the options the SYN offered: no window scale to a SYN without one (RFC 7323 section 2.2)", func() {
		listen(DefaultConfig(), 16)
		syn := fullSYN()
		syn.HasWScale = false
		ck := cookie(syn)
		Expect(ck.HasWScale).To(BeFalse())
		Expect(ck.SACKPermitted).To(BeTrue())
		Expect(ck.HasTS).To(BeTrue())
	})

	It("makes a connection without timestamps when the peer sent none (RFC 7323 section 3.2)", func() {
		listen(DefaultConfig(), 16)
		syn := fullSYN()
		syn.HasTS = false
		ck := cookie(syn)
		Expect(ck.HasTS).To(BeFalse())
		h.inject(ackOf(ck, FlagACK, nil))
		c := accept()
		Expect(c.Info().Timestamps).To(BeFalse())
		Expect(c.Info().MSS).To(Equal(1460))
	})

	It("drops a valid cookie ACK while the accept queue is full and completes it on the retransmission once there is room", func() {
		listen(DefaultConfig(), 1)
		ck := cookie(fullSYN())
		// The half-open connection completes and fills the accept queue.
		h.inject(Repr{SrcPort: 20000, Seq: 2, Ack: halfOpen.Seq + 1, Flags: FlagACK, Window: 1000})
		h.take()
		Expect(l.Pending()).To(Equal(1))
		h.inject(ackOf(ck, FlagACK, nil))
		h.none()
		Expect(l.Pending()).To(Equal(1))
		Expect(h.s.NumConns()).To(Equal(1))
		Expect(h.s.Stats().Drops.AcceptQueueFull).To(BeEquivalentTo(1))
		first, _ := l.Accept()
		Expect(first.RemoteAddr().Port).To(BeEquivalentTo(20000))
		h.inject(ackOf(ck, FlagACK, nil))
		Expect(accept().State()).To(Equal(StateEstablished))
	})

	It("gives the connection the listener's congestion control", func() {
		listen(tuned(func(c *Config) { c.CongestionControl = CCCubic }), 16)
		Expect(l.SetCongestionControl(CCNewReno)).To(Succeed())
		ck := cookie(fullSYN())
		h.inject(ackOf(ck, FlagACK, nil))
		Expect(accept().Info().CC).To(Equal(CCNewReno))
	})

	It("processes a FIN carried by the cookie ACK", func() {
		listen(DefaultConfig(), 16)
		ck := cookie(fullSYN())
		h.inject(ackOf(ck, FlagACK|FlagFIN, nil))
		a := h.one()
		Expect(a.Flags).To(Equal(FlagACK))
		Expect(a.Ack).To(Equal(Seq(5002)))
		Expect(accept().State()).To(Equal(StateCloseWait))
	})

	It("starts recover at the ISS, so the first loss is fast-retransmitted (RFC 6582 section 3.2)", func() {
		listen(tuned(func(c *Config) { c.CongestionControl = CCNewReno }), 16)
		syn := fullSYN()
		syn.SACKPermitted = false
		ck := cookie(syn)
		h.inject(ackOf(ck, FlagACK, nil))
		c := accept()
		mss := c.Info().MSS
		_, _ = c.Write(pattern(10 * mss))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
		for i := 0; i < 3; i++ {
			h.inject(ackOf(ck, FlagACK, nil)) // duplicate ACKs of SND.UNA
		}
		out := h.take()
		Expect(out).To(HaveLen(1))
		Expect(out[0].Seq).To(Equal(ck.Seq + 1))
		Expect(h.s.Stats().FastRetransmits).To(BeEquivalentTo(1))
	})

	It("checks ACKs as cookies for the whole cookie lifetime after the last cookie sent", func() {
		listen(DefaultConfig(), 16)
		ck := cookie(fullSYN())
		h.advance(cookieMaxAge * cookieTick)
		h.take() // the half-open connection's SYN-ACK retransmissions
		r := ackOf(ck, FlagACK, nil)
		r.TSVal = 5000
		h.inject(r)
		h.none()
		Expect(accept().State()).To(Equal(StateEstablished))
		Expect(h.s.Stats().SynCookiesValid).To(BeEquivalentTo(1))
	})

	// The options ride in the low bits of TSval, which must not be ahead
	// of our timestamp clock; Linux's cookie_init_timestamp steps back a
	// whole 2^5 only when the encoded value would be.
	DescribeTable("encodes the options in the clock's own TSval, one step back only when that would be ahead of the clock",
		func(clockLow uint32, back bool) {
			listen(DefaultConfig(), 16)
			id := fourTuple{localAddr: h.local, remoteAddr: h.remote, localPort: h.lport, remotePort: port}
			clock := func() uint32 { return uint32(h.now/h.s.cfg.TimestampTick) + h.s.tsOffsetFor(id) }
			for clock()&(1<<cookieTSBits-1) != clockLow {
				h.advance(h.s.cfg.TimestampTick)
			}
			ck := cookie(fullSYN())
			want := clock()&^(1<<cookieTSBits-1) | 0x17 // SACK and window scale 7
			if back {
				want -= 1 << cookieTSBits
			}
			Expect(ck.TSVal).To(Equal(want))
			Expect(int32(ck.TSVal - clock())).To(BeNumerically("<=", 0))
		},
		Entry("clock's low bits equal to the options: the clock itself", uint32(0x17), false),
		Entry("clock's low bits just below the options: one step back", uint32(0x16), true),
		Entry("clock's low bits above the options: no step", uint32(0x18), false),
	)
})

var _ = Describe("An active open's details (RFC 9293 section 3.10.7.3)", func() {
	var h *harness
	BeforeEach(func() { h = newHarness(DefaultConfig()) })

	It("picks ephemeral ports in 32768-60999 and wraps from the top to the bottom", func() {
		h.s.nextPort = 60998
		var got []uint16
		for i := 0; i < 3; i++ {
			c, err := h.s.Connect(h.now, Addr{h.local, 0}, Addr{h.remote, h.rport})
			Expect(err).NotTo(HaveOccurred())
			got = append(got, c.LocalAddr().Port)
		}
		Expect(got).To(Equal([]uint16{60998, 60999, 32768}))
	})

	It("resets a SYN-ACK whose SEG.ACK =< ISS with <SEQ=SEG.ACK><CTL=RST> and stays in SYN-SENT", func() {
		c, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
		Expect(err).NotTo(HaveOccurred())
		syn := h.one()
		h.inject(Repr{Seq: h.peerISS, Ack: syn.Seq, Flags: FlagSYN | FlagACK, Window: 1000})
		rst := h.one()
		Expect(rst.Flags).To(Equal(FlagRST))
		Expect(rst.Seq).To(Equal(syn.Seq))
		Expect(c.State()).To(Equal(StateSynSent))
	})

	It("takes the SYN-ACK's window unscaled (RFC 7323 section 2.2)", func() {
		c, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
		Expect(err).NotTo(HaveOccurred())
		syn := h.one()
		h.inject(Repr{Seq: h.peerISS, Ack: syn.Seq + 1, Flags: FlagSYN | FlagACK, Window: 30000, MSS: 1460,
			HasWScale: true, WScale: 7})
		h.one()
		Expect(c.State()).To(Equal(StateEstablished))
		Expect(c.Info().SndWnd).To(Equal(30000))
		Expect(c.Info().SndWscale).To(BeEquivalentTo(7))
	})
})

var _ = Describe("Timers that depend on state", func() {
	It("arms no persist timer into a zero window when there is nothing to send", func() {
		h := newHarness(DefaultConfig())
		h.established(defaultPeer())
		r := h.seg(FlagACK, h.base(), nil)
		r.Window = 0
		h.inject(r)
		// Past the handshake's stale timer keys, nothing is left.
		h.advance(5 * time.Second)
		h.none()
		Expect(h.s.Poll(h.now)).To(Equal(NoDeadline))
	})

	It("times zero-window probes by the persist timer alone, not by another timer of the connection", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		// A zero window, and 10 bytes from the peer: the delayed ACK
		// timer (40 ms) runs before the persist timer (200 ms).
		r := h.seg(FlagACK, h.base(), []byte("0123456789"))
		r.Window = 0
		h.inject(r)
		h.peerNxt += 10
		_, _ = c.Write(pattern(100))
		h.s.Poll(h.now)
		h.none()
		t0 := h.now
		h.advance(300 * time.Millisecond)
		out := h.take()
		Expect(out).To(HaveLen(2), "segments: %v", describe(out))
		Expect(out[0].Payload).To(BeEmpty()) // the delayed ACK
		Expect(out[0].at - t0).To(Equal(40 * time.Millisecond))
		Expect(out[1].Payload).To(HaveLen(1)) // the probe
		Expect(out[1].at - t0).To(Equal(200 * time.Millisecond))
	})

	It("sends keep-alive probes in CLOSE-WAIT too (RFC 1122 4.2.3.6: an idle connection)", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		h.peerSend(FlagFIN|FlagACK, h.base(), nil)
		h.take()
		Expect(c.State()).To(Equal(StateCloseWait))
		c.SetKeepAlive(true, 10*time.Second, time.Second, 3)
		h.s.Poll(h.now)
		t0 := h.now
		h.advance(10*time.Second + time.Millisecond)
		p := h.one()
		Expect(p.Seq).To(Equal(h.base() - 1))
		Expect(p.at - t0).To(Equal(10 * time.Second))
	})

	It("counts the keep-alive idle time from the last segment received", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		h.peerSend(FlagACK, h.base(), pattern(10))
		t0 := h.now
		h.advance(5 * time.Second)
		h.take() // the delayed ACK
		c.SetKeepAlive(true, 10*time.Second, time.Second, 3)
		h.s.Poll(h.now)
		h.advance(5500 * time.Millisecond)
		p := h.one()
		Expect(p.at - t0).To(Equal(10 * time.Second))
	})

	Describe("FIN-WAIT-2 (Linux tcp_fin_timeout)", func() {
		var (
			h *harness
			c *Conn
		)
		finWait2 := func(close func() error) {
			h = newHarness(tuned(func(c *Config) { c.FinWait2Timeout = 5 * time.Second }))
			c = h.established(defaultPeer())
			Expect(close()).To(Succeed())
			h.s.Poll(h.now)
			Expect(h.one().Flags).To(Equal(FlagFIN | FlagACK))
			h.peerSend(FlagACK, h.base()+1, nil)
			Expect(c.State()).To(Equal(StateFinWait2))
		}

		It("ends an orphaned FIN-WAIT-2 after the timeout, silently", func() {
			finWait2(func() error { return c.Close() })
			h.advance(5*time.Second - time.Millisecond)
			Expect(c.State()).To(Equal(StateFinWait2))
			h.advance(time.Millisecond)
			Expect(c.State()).To(Equal(StateClosed))
			Expect(h.s.NumConns()).To(BeZero())
			h.none()
		})

		It("keeps a half-closed one (CloseWrite): the peer may still send; Close then starts the timeout", func() {
			finWait2(func() error { return c.CloseWrite() })
			h.advance(time.Minute)
			Expect(c.State()).To(Equal(StateFinWait2))
			Expect(h.s.Poll(h.now)).To(Equal(NoDeadline))
			Expect(c.Close()).To(Succeed())
			h.s.Poll(h.now)
			h.advance(5*time.Second - time.Millisecond)
			Expect(c.State()).To(Equal(StateFinWait2))
			h.advance(time.Millisecond)
			Expect(c.State()).To(Equal(StateClosed))
		})
	})
})

var _ = Describe("Receiver silly window avoidance (RFC 9293 section 3.8.6.2.2)", func() {
	var (
		h *harness
		c *Conn
	)
	// A closed window reopens once the right edge can move by
	// min(RCV.BUFF/2, MSS) = 1460 bytes here: that much is enough, less
	// is not.
	BeforeEach(func() {
		h = newHarness(tuned(func(c *Config) { c.RecvBuffer = 8 * segSize }))
		c = h.established(defaultPeer())
		for i := 0; i < 8; i++ {
			h.peerSend(FlagACK, h.base(), pattern(segSize))
		}
		acks := h.take()
		Expect(acks[len(acks)-1].Window).To(BeZero())
	})

	It("announces nothing after a read of one byte less", func() {
		n, _ := c.Read(make([]byte, 1459))
		Expect(n).To(Equal(1459))
		h.s.Poll(h.now)
		h.none()
	})

	It("opens the window after a read of exactly that much", func() {
		n, _ := c.Read(make([]byte, 1460))
		Expect(n).To(Equal(1460))
		h.s.Poll(h.now)
		upd := h.one()
		Expect(upd.Ack).To(Equal(h.peerNxt))
		Expect(upd.Window).To(BeEquivalentTo(1460))
	})
})

var _ = Describe("More timer rules", func() {
	It("does not push the persist timer back when segments keep arriving into a zero window", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		r := h.seg(FlagACK, h.base(), nil)
		r.Window = 0
		h.inject(r)
		_, _ = c.Write(pattern(100))
		h.s.Poll(h.now)
		h.none()
		t0 := h.now
		var probes []time.Duration
		for i := 0; i < 7; i++ {
			h.advance(100 * time.Millisecond)
			d := h.seg(FlagACK, h.base(), []byte("x"))
			d.Window = 0
			h.inject(d)
			h.peerNxt++
			for _, s := range h.take() {
				if len(s.Payload) == 1 && s.Seq == h.base() {
					probes = append(probes, s.at-t0)
				}
			}
		}
		// RTO 200 ms, then backed off: 200 and 600 ms.
		Expect(probes).To(Equal([]time.Duration{200 * time.Millisecond, 600 * time.Millisecond}))
	})

	It("sends no keep-alive probes outside ESTABLISHED and CLOSE-WAIT (a half-closed FIN-WAIT-2 waits on the peer)", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		c.SetKeepAlive(true, 10*time.Second, time.Second, 3)
		h.s.Poll(h.now)
		Expect(c.CloseWrite()).To(Succeed())
		h.s.Poll(h.now)
		Expect(h.one().Flags).To(Equal(FlagFIN | FlagACK))
		h.peerSend(FlagACK, h.base()+1, nil)
		Expect(c.State()).To(Equal(StateFinWait2))
		h.advance(30 * time.Second)
		h.none()
		Expect(c.State()).To(Equal(StateFinWait2))
		Expect(h.s.Stats().KeepaliveProbes).To(BeZero())
	})

	It("does not reset an orphaned connection for a FIN without data beyond RCV.NXT (RFC 2525 section 2.17 is about data)", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		Expect(c.Close()).To(Succeed())
		h.s.Poll(h.now)
		Expect(h.one().Flags).To(Equal(FlagFIN | FlagACK))
		h.peerSend(FlagACK, h.base()+1, nil)
		Expect(c.State()).To(Equal(StateFinWait2))
		fin := h.seg(FlagFIN|FlagACK, h.base()+1, nil)
		fin.Seq = h.peerNxt + 10 // ten octets are missing before it
		h.inject(fin)
		a := h.one()
		Expect(a.Flags).To(Equal(FlagACK))
		Expect(a.Ack).To(Equal(h.peerNxt))
		Expect(c.State()).To(Equal(StateFinWait2))
		Expect(h.s.Stats().Drops.AfterClose).To(BeZero())
	})
})

var _ = Describe("The SACK scoreboard (RFC 2018, RFC 6675 section 3)", func() {
	var (
		h *harness
		c *Conn
		S func(int) Seq
	)
	setup := func(maxRanges int) {
		h = newHarness(tuned(func(c *Config) { c.MaxOOORanges = maxRanges }))
		c = h.established(defaultPeer())
		S = func(i int) Seq { return h.base().Add(i * segSize) }
		_, _ = c.Write(pattern(10 * segSize))
		h.s.Poll(h.now)
		Expect(h.take()).To(HaveLen(10))
	}
	sack := func(ack Seq, wnd uint16, blocks ...SACKBlock) {
		r := h.seg(FlagACK, ack, nil)
		r.Window = wnd
		r.NumSACK = copy(r.SACK[:], blocks)
		h.inject(r)
	}
	blk := func(a, b int) SACKBlock { return SACKBlock{S(a), S(b)} }

	It("keeps a block that arrives below one already recorded", func() {
		setup(64)
		sack(S(0), 65535, blk(4, 5))
		sack(S(0), 65535, blk(2, 3)) // a peer may send the newest block only
		Expect(c.Info().SACKedBytes).To(Equal(2 * segSize))
	})

	It("forgets a range once the cumulative ACK reaches its end: it holds no place in the bounded scoreboard", func() {
		setup(2)
		sack(S(0), 65535, blk(1, 2))
		Expect(c.Info().SACKedBytes).To(Equal(segSize))
		sack(S(2), 65535)
		Expect(c.Info().SACKedBytes).To(BeZero())
		sack(S(2), 65535, blk(3, 4), blk(5, 6))
		Expect(c.Info().SACKedBytes).To(Equal(2 * segSize))
	})

	It("ignores an empty block", func() {
		setup(1)
		sack(S(0), 65535, SACKBlock{S(2), S(2)})
		sack(S(0), 65535, blk(3, 4))
		Expect(c.Info().SACKedBytes).To(Equal(segSize))
	})

	It("ignores a block ending at SND.UNA (a D-SACK, RFC 2883)", func() {
		setup(1)
		sack(S(1), 65535)
		sack(S(1), 65535, blk(0, 1))
		sack(S(1), 65535, blk(3, 4))
		Expect(c.Info().SACKedBytes).To(Equal(segSize))
	})

	// RFC 6675 section 2: with SACK, an ACK that brings new SACK
	// information counts as a duplicate even when its window differs;
	// without new information a changed window makes it a window update.
	It("counts ACKs with new SACK information as duplicates even when the window changes", func() {
		setup(64)
		for i, w := range []uint16{60000, 59000, 58000} {
			sack(S(0), w, blk(1, 2+i))
		}
		Expect(h.s.Stats().DupAcks).To(BeEquivalentTo(3))
		out := h.take()
		Expect(out).NotTo(BeEmpty())
		Expect(out[0].Seq).To(Equal(S(0)))
		Expect(c.Info().InRecovery).To(BeTrue())
	})

	It("does not count ACKs that only change the window", func() {
		setup(64)
		for _, w := range []uint16{60000, 59000, 58000} {
			sack(S(0), w)
		}
		Expect(h.s.Stats().DupAcks).To(BeZero())
		h.none()
	})
})
