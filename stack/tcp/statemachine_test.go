package tcp

import (
	"io"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Helpers shared by the state-machine specs. After established(), our
// data starts at h.ourISS+1 and the peer's at h.peerNxt.

// peerData sends n bytes (or the given data) from the peer, acknowledging ack.
func (h *harness) peerSend(flags Flags, ack Seq, data []byte) {
	r := h.seg(flags, ack, data)
	h.inject(r)
	h.peerNxt = h.peerNxt.Add(len(data))
	if flags&FlagFIN != 0 {
		h.peerNxt++
	}
}

func (h *harness) base() Seq { return h.ourISS + 1 }

var _ = Describe("State machine", func() {
	var (
		h *harness
		c *Conn
	)
	est := func() {
		c = h.established(defaultPeer())
	}
	closeWait := func() {
		est()
		h.peerSend(FlagFIN|FlagACK, h.base(), nil)
		h.take()
	}
	finWait1 := func() {
		est()
		Expect(c.CloseWrite()).To(Succeed())
		h.s.Poll(h.now)
		fin := h.one()
		Expect(fin.Flags).To(Equal(FlagFIN | FlagACK))
		Expect(fin.Seq).To(Equal(h.base()))
	}
	finWait2 := func() {
		finWait1()
		h.peerSend(FlagACK, h.base()+1, nil)
		h.none()
		Expect(c.State()).To(Equal(StateFinWait2))
	}
	closing := func() {
		finWait1()
		h.peerSend(FlagFIN|FlagACK, h.base(), nil)
		h.take()
		Expect(c.State()).To(Equal(StateClosing))
	}
	lastAck := func() {
		closeWait()
		Expect(c.CloseWrite()).To(Succeed())
		h.s.Poll(h.now)
		Expect(h.one().Flags).To(Equal(FlagFIN | FlagACK))
	}
	timeWait := func() {
		finWait2()
		h.peerSend(FlagFIN|FlagACK, h.base()+1, nil)
		h.take()
		Expect(c.State()).To(Equal(StateTimeWait))
	}
	ourNxt := func() Seq {
		if c.finQueued && c.sndMax.GreaterThan(c.sndBufSeq) {
			return h.base() + 1
		}
		return h.base()
	}

	BeforeEach(func() { h = newHarness(tuned(func(c *Config) { c.MSL = time.Second })) })

	DescribeTable("a FIN from the peer (RFC 9293 section 3.10.7.4 eighth)",
		func(setup func(), retransmit bool, ackOurFin bool, want State) {
			setup()
			ack := ourNxt()
			if !ackOurFin && c.finQueued {
				ack = h.base()
			}
			if retransmit {
				h.peerNxt-- // repeat the FIN already received
			}
			h.peerSend(FlagFIN|FlagACK, ack, nil)
			a := h.one()
			Expect(a.Flags).To(Equal(FlagACK))
			Expect(a.Ack).To(Equal(h.peerNxt))
			Expect(c.State()).To(Equal(want))
			if want == StateCloseWait {
				_, err := c.Read(make([]byte, 10))
				Expect(err).To(Equal(io.EOF))
			}
		},
		Entry("ESTABLISHED -> CLOSE-WAIT", est, false, false, StateCloseWait),
		Entry("FIN-WAIT-1, our FIN unacked -> CLOSING (simultaneous close)", finWait1, false, false, StateClosing),
		Entry("FIN-WAIT-1, FIN acking ours -> TIME-WAIT", finWait1, false, true, StateTimeWait),
		Entry("FIN-WAIT-2 -> TIME-WAIT", finWait2, false, true, StateTimeWait),
		Entry("CLOSE-WAIT, retransmitted FIN -> ACK, stays", closeWait, true, false, StateCloseWait),
		Entry("CLOSING, retransmitted FIN -> ACK, stays", closing, true, false, StateClosing),
		Entry("LAST-ACK, retransmitted FIN -> ACK, stays", lastAck, true, false, StateLastAck),
		Entry("TIME-WAIT, retransmitted FIN -> ACK, stays", timeWait, true, true, StateTimeWait),
	)

	It("closes simultaneously: both FINs cross, CLOSING, then TIME-WAIT on the ACK", func() {
		closing()
		h.peerSend(FlagACK, h.base()+1, nil)
		h.none()
		Expect(c.State()).To(Equal(StateTimeWait))
	})

	It("half-closes: after CloseWrite data still arrives and is read", func() {
		finWait2()
		h.peerSend(FlagACK|FlagPSH, h.base()+1, []byte("late data"))
		buf := make([]byte, 20)
		n, err := c.Read(buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(buf[:n])).To(Equal("late data"))
		Expect(c.State()).To(Equal(StateFinWait2))
	})

	It("LAST-ACK ends when our FIN is acknowledged", func() {
		lastAck()
		h.peerSend(FlagACK, h.base()+1, nil)
		h.none()
		Expect(c.State()).To(Equal(StateClosed))
		Expect(h.s.NumConns()).To(BeZero())
	})

	It("TIME-WAIT lasts 2*MSL, restarted by a retransmitted FIN, then the connection is gone", func() {
		timeWait()
		Expect(h.s.Stats().TimewaitConns).To(BeEquivalentTo(1))
		h.advance(1900 * time.Millisecond)
		Expect(c.State()).To(Equal(StateTimeWait))
		h.peerNxt--
		h.peerSend(FlagFIN|FlagACK, h.base()+1, nil)
		Expect(h.one().Flags).To(Equal(FlagACK))
		h.advance(1900 * time.Millisecond)
		Expect(c.State()).To(Equal(StateTimeWait))
		h.advance(200 * time.Millisecond)
		Expect(c.State()).To(Equal(StateClosed))
		Expect(h.s.NumConns()).To(BeZero())
		h.none()
	})

	DescribeTable("a RST from the peer (RFC 9293 section 3.10.7.4 second, RFC 5961 section 3.2)",
		func(setup func(), offset int, wantState State, wantErr error, wantChallenge bool) {
			setup()
			before := c.State()
			h.inject(Repr{Seq: h.peerNxt.Add(offset), Flags: FlagRST})
			if wantChallenge {
				a := h.one()
				Expect(a.Flags).To(Equal(FlagACK))
				Expect(a.Seq).To(Equal(ourNxt()))
				Expect(a.Ack).To(Equal(h.peerNxt))
				Expect(h.s.Stats().ChallengeAcks).To(BeEquivalentTo(1))
			} else {
				h.none()
			}
			if wantState == StateClosed {
				Expect(c.State()).To(Equal(StateClosed))
			} else {
				Expect(c.State()).To(Equal(before))
			}
			if wantErr != nil {
				Expect(c.Err()).To(MatchError(wantErr))
			}
		},
		Entry("ESTABLISHED, exact: reset", est, 0, StateClosed, ErrConnReset, false),
		Entry("ESTABLISHED, in window but not exact: challenge ACK", est, 100, StateEstablished, nil, true),
		Entry("ESTABLISHED, out of window: dropped", est, 1<<30, StateEstablished, nil, false),
		Entry("CLOSE-WAIT, exact: reset", closeWait, 0, StateClosed, ErrConnReset, false),
		Entry("CLOSE-WAIT, in window: challenge ACK", closeWait, 10, StateCloseWait, nil, true),
		Entry("FIN-WAIT-1, exact: reset", finWait1, 0, StateClosed, ErrConnReset, false),
		Entry("FIN-WAIT-2, exact: reset", finWait2, 0, StateClosed, ErrConnReset, false),
		Entry("FIN-WAIT-2, in window: challenge ACK", finWait2, 5, StateFinWait2, nil, true),
		Entry("CLOSING, exact: closed", closing, 0, StateClosed, nil, false),
		Entry("LAST-ACK, exact: closed", lastAck, 0, StateClosed, nil, false),
		Entry("TIME-WAIT, exact: closed", timeWait, 0, StateClosed, nil, false),
	)

	It("a RST in SYN-RECEIVED of a passive open returns to LISTEN silently", func() {
		l, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		h.one()
		Expect(h.s.NumConns()).To(Equal(1))
		h.inject(Repr{Seq: h.peerISS + 1, Flags: FlagRST})
		h.none()
		Expect(h.s.NumConns()).To(BeZero())
		_, ok := l.Accept()
		Expect(ok).To(BeFalse())
		// Still listening.
		h.inject(Repr{Seq: h.peerISS + 50, Flags: FlagSYN, Window: 100})
		Expect(h.one().Flags).To(Equal(FlagSYN | FlagACK))
	})

	Describe("RFC 5961 checks", func() {
		It("answers a SYN in a synchronized state with a challenge ACK", func() {
			est()
			h.inject(Repr{Seq: h.peerNxt + 1000, Flags: FlagSYN, Window: 100})
			a := h.one()
			Expect(a.Flags).To(Equal(FlagACK))
			Expect(a.Seq).To(Equal(h.base()))
			Expect(a.Ack).To(Equal(h.peerNxt))
			Expect(c.State()).To(Equal(StateEstablished))
			Expect(h.s.Stats().ChallengeAcks).To(BeEquivalentTo(1))
		})
		It("drops an ACK of data never sent, answering with an ACK", func() {
			est()
			h.peerSend(FlagACK, h.base()+5000, []byte("xyz"))
			a := h.one()
			Expect(a.Ack).To(Equal(h.peerNxt - 3)) // the data was dropped
			Expect(c.RecvBuffered()).To(BeZero())
			Expect(h.s.Stats().Drops.BadAck).To(BeEquivalentTo(1))
		})
		It("answers an ACK older than SND.UNA - MAX.SND.WND with a challenge ACK (section 5.2)", func() {
			est()
			h.peerSend(FlagACK, h.base()-Seq(1<<30), []byte("xyz"))
			Expect(h.one().Ack).To(Equal(h.peerNxt - 3))
			Expect(h.s.Stats().ChallengeAcks).To(BeEquivalentTo(1))
		})
		It("rate-limits challenge ACKs (section 7)", func() {
			// invalid_ratelimit 0 leaves the stack-wide limit alone to
			// see; both together are in limits_test.go.
			h = newHarness(tuned(func(c *Config) { c.ChallengeAckLimit = 3; c.InvalidRateLimit = 0 }))
			est()
			for i := 0; i < 10; i++ {
				h.inject(Repr{Seq: h.peerNxt + 100, Flags: FlagRST})
			}
			Expect(h.take()).To(HaveLen(3))
			Expect(h.s.Stats().Drops.ChallengeRateLimit).To(BeEquivalentTo(7))
			h.advance(time.Second)
			h.inject(Repr{Seq: h.peerNxt + 100, Flags: FlagRST})
			Expect(h.take()).To(HaveLen(1))
		})
	})
})

var _ = Describe("Receive sequence wrap", func() {
	It("reassembles out-of-order data across 2^32", func() {
		h := newHarness(DefaultConfig())
		h.peerISS = Seq(0xffffff00)
		c := h.established(defaultPeer())
		d := pattern(600)
		P := h.peerNxt
		for _, i := range []int{2, 0, 1} {
			r := h.seg(FlagACK, h.base(), d[i*200:(i+1)*200])
			r.Seq = P.Add(i * 200)
			h.inject(r)
		}
		buf := make([]byte, 1000)
		n, err := c.Read(buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(buf[:n]).To(Equal(d))
		Expect(uint32(c.rcvNxt)).To(BeNumerically("<", 0x1000))
	})
})

var _ = Describe("Sockets", func() {
	It("reports accept readiness and per-connection congestion control", func() {
		h := newHarness(tuned(func(c *Config) { c.CongestionControl = CCNewReno }))
		l, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.SetCongestionControl(CCCubic)).To(Succeed())
		Expect(l.SetCongestionControl("vegas")).NotTo(Succeed())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		sa := h.one()
		h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 100})
		ev := h.s.Events(nil)
		Expect(ev).To(ContainElement(Event{Listener: l, Mask: EventAcceptable}))
		c, ok := l.Accept()
		Expect(ok).To(BeTrue())
		Expect(c.Info().CC).To(Equal(CCCubic))
		Expect(c.SetCongestionControl(CCNewReno)).To(Succeed())
		Expect(c.Info().CC).To(Equal(CCNewReno))
		_, err = h.s.Listen(h.local, h.lport, 4)
		Expect(err).To(MatchError(ErrAddrInUse))
	})

	It("resets queued connections when the listener closes", func() {
		h := newHarness(DefaultConfig())
		l, _ := h.s.Listen(h.local, h.lport, 4)
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		sa := h.one()
		h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 100})
		l.Close()
		h.s.Poll(h.now)
		Expect(h.one().Flags).To(Equal(FlagRST))
		Expect(h.s.NumConns()).To(BeZero())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		Expect(h.one().Flags).To(Equal(FlagRST | FlagACK))
	})

	DescribeTable("Config.Validate names the bad key",
		func(c Config, want string) {
			err := c.Validate()
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("mtu", tuned(func(c *Config) { c.MTU = 50 }), "mtu"),
		Entry("min above max", tuned(func(c *Config) {
			c.MinRTO = 2 * time.Second
			c.MaxRTO = time.Second
		}), "min_rto"),
		Entry("cc", tuned(func(c *Config) { c.CongestionControl = "bbr" }), "congestion_control"),
		Entry("delack", tuned(func(c *Config) { c.DelayedAckTimeout = time.Second }), "delayed_ack_timeout"),
		Entry("negative", tuned(func(c *Config) { c.SynBacklog = -1 }), "syn_backlog"),
		Entry("recv buffer", tuned(func(c *Config) { c.RecvBuffer = 100 }), "recv_buffer"),
	)
})

var _ = Describe("Accept queue overflow", func() {
	It("keeps a connection half-open while the accept queue is full and completes it once there is room", func() {
		h := newHarness(DefaultConfig())
		l, _ := h.s.Listen(h.local, h.lport, 1)
		open := func(port uint16) captured {
			h.inject(Repr{SrcPort: port, Seq: h.peerISS, Flags: FlagSYN, Window: 100})
			return h.one()
		}
		sa1 := open(30001)
		sa2 := open(30002)
		h.inject(Repr{SrcPort: 30001, Seq: h.peerISS + 1, Ack: sa1.Seq + 1, Flags: FlagACK, Window: 100})
		h.inject(Repr{SrcPort: 30002, Seq: h.peerISS + 1, Ack: sa2.Seq + 1, Flags: FlagACK, Window: 100})
		Expect(l.Pending()).To(Equal(1))
		Expect(h.s.Stats().ListenOverflows).To(BeEquivalentTo(1))
		_, ok := l.Accept()
		Expect(ok).To(BeTrue())
		// The peer's retransmitted ACK now gets in.
		h.inject(Repr{SrcPort: 30002, Seq: h.peerISS + 1, Ack: sa2.Seq + 1, Flags: FlagACK, Window: 100})
		c, ok := l.Accept()
		Expect(ok).To(BeTrue())
		Expect(c.RemoteAddr().Port).To(BeEquivalentTo(30002))
	})
})
