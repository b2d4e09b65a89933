package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs written for the mutants that survived .ci/mutate-tcp after the
// connection was split into sender, receiver and timers with one
// termination path (issue 16, item 8); docs/tcp.md, "Mutation testing",
// lists them. Each names the mutant it kills.

var _ = Describe("Listener.Close", func() {
	// Kills accept.go:84, guard deleted (`if l.closed { return }`): a
	// second Close would delete whatever listener holds the key now.
	It("does nothing the second time, even when a new listener took the port in between", func() {
		h := newHarness(DefaultConfig())
		old, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		old.Close()
		l, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		old.Close()
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 1000})
		sa := h.one()
		Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
		h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 1000})
		h.none()
		Expect(l.Pending()).To(Equal(1))
		_, err = h.s.Listen(h.local, h.lport, 4)
		Expect(err).To(MatchError(ErrAddrInUse), "the new listener still holds the port")
	})
})

var _ = Describe("Which segments a listener checks as SYN cookies (Linux tcp_v4_cookie_check, tcp_synq_no_recent_overflow)", func() {
	// Kills accept.go:137 `&&` -> `||` in `r.Flags&FlagSYN == 0 &&
	// l.sentCookie` and in `... && l.sentCookie && now-l.cookieAt <=
	// ...`: at time 0 the zero cookieAt is "recent", so only sentCookie
	// keeps a stray ACK from being checked.
	It("answers a stray ACK with a RST without checking it when no cookie was ever sent", func() {
		h := newHarness(DefaultConfig())
		_, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: 5001, Ack: 777, Flags: FlagACK, Window: 1000})
		rst := h.one()
		Expect(rst.Flags).To(Equal(FlagRST))
		Expect(rst.Seq).To(Equal(Seq(777)))
		Expect(h.s.Stats().Drops.NoSocket).To(BeEquivalentTo(1))
		Expect(h.s.Stats().SynCookiesFailed).To(BeZero(), "no cookie was sent: nothing to check")
	})

	// Kills the same two mutants the other way: the third step of a
	// cookie handshake carries no SYN, so a SYN-ACK is never one, even
	// with a valid cookie in SEG.ACK just after a cookie went out. RFC
	// 9293 section 3.10.7.2: any acknowledgment is bad in LISTEN.
	It("answers a SYN-ACK with a RST even when it acknowledges a valid cookie", func() {
		cfg := DefaultConfig()
		cfg.SynBacklog = 1
		h := newHarness(cfg)
		l, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{SrcPort: 20000, Seq: 1, Flags: FlagSYN, Window: 1000})
		Expect(h.one().Flags).To(Equal(FlagSYN | FlagACK))
		h.inject(Repr{SrcPort: 20001, Seq: 5000, Flags: FlagSYN, Window: 1000, MSS: 1460})
		ck := h.one()
		Expect(h.s.Stats().SynCookiesSent).To(BeEquivalentTo(1))
		h.inject(Repr{SrcPort: 20001, Seq: 5001, Ack: ck.Seq + 1, Flags: FlagSYN | FlagACK, Window: 1000})
		rst := h.one()
		Expect(rst.Flags).To(Equal(FlagRST))
		Expect(rst.Seq).To(Equal(ck.Seq + 1))
		Expect(h.s.Stats().SynCookiesValid).To(BeZero())
		Expect(h.s.Stats().SynCookiesFailed).To(BeZero())
		Expect(h.s.NumConns()).To(Equal(1), "only the half-open connection from port 20000")
		Expect(l.Pending()).To(BeZero())
	})
})

var _ = Describe("Unread data of a connection that ended", func() {
	var (
		h *harness
		c *Conn
	)
	BeforeEach(func() {
		h = newHarness(DefaultConfig())
		c = h.established(defaultPeer())
		h.peerSend(FlagACK|FlagPSH, h.base(), []byte("hello"))
		h.take()
		h.peerSend(FlagRST, h.base(), nil)
		Expect(c.State()).To(Equal(StateClosed))
	})

	// Kills end.go:140 `==` -> `!=` in `c.rcvBuf.length() == 0`:
	// removeConn keeps a buffer that holds unread bytes, since a reset
	// does not take back what was delivered (the application reads it,
	// then the error).
	It("stays readable after a reset, then Read reports the reset", func() {
		Expect(c.Readable()).To(BeTrue())
		p := make([]byte, 16)
		n, err := c.Read(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(p[:n])).To(Equal("hello"))
		_, err = c.Read(p)
		Expect(err).To(MatchError(ErrConnReset))
		Expect(c.rcvBuf.buf).To(BeNil(), "the last read gives the buffer back")
	})

	// Kills conn.go:391, guard deleted (`if c.state == StateClosed {
	// ... return nil }`): closing a connection that already ended is not
	// an error, and gives its unread bytes back to the memory budget.
	It("is given back by Close, which succeeds", func() {
		Expect(c.Close()).To(Succeed())
		Expect(c.RecvBuffered()).To(BeZero())
		Expect(c.rcvBuf.buf).To(BeNil())
		h.s.Poll(h.now)
		h.none() // a connection that ended sends nothing more
	})
})

var _ = Describe("Socket calls after the TCB split", func() {
	// Kills conn.go:256 `||` -> `&&` in `c.rcvBuf.length() > 0 ||
	// c.finRcvd`: data alone makes a connection readable, and so does a
	// FIN alone (Read returns io.EOF).
	It("reports Readable for buffered data and for the peer's FIN, each alone", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		Expect(c.Readable()).To(BeFalse())
		h.peerSend(FlagACK|FlagPSH, h.base(), []byte("abc"))
		Expect(c.Readable()).To(BeTrue())
		_, err := c.Read(make([]byte, 3))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Readable()).To(BeFalse())
		h.peerSend(FlagACK|FlagFIN, h.base(), nil)
		Expect(c.Readable()).To(BeTrue())
	})

	// Kills conn.go:267 `&&` -> `||` in `!c.finQueued && c.err == nil`:
	// CLOSE in SYN-RECEIVED queues the FIN without leaving the state
	// (RFC 9293 section 3.10.4), and nothing may be written after it.
	It("refuses Write after CloseWrite in SYN-RECEIVED (simultaneous open)", func() {
		h := newHarness(DefaultConfig())
		c, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
		Expect(err).NotTo(HaveOccurred())
		h.one()
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535, MSS: 1460})
		h.take()
		Expect(c.State()).To(Equal(StateSynReceived))
		Expect(c.Writable()).To(BeTrue())
		Expect(c.CloseWrite()).To(Succeed())
		Expect(c.State()).To(Equal(StateSynReceived))
		Expect(c.Writable()).To(BeFalse())
		_, err = c.Write([]byte("late"))
		Expect(err).To(MatchError(ErrClosed))
		Expect(c.SendBuffered()).To(BeZero())
	})

	// Kills conn.go:292 `==` -> `!=` in `c.rcvBuf.length() == 0 &&
	// c.ooo.empty()`: a first-size receive buffer that a read empties
	// goes back to the stack's spares, so an idle connection holds none.
	It("gives an emptied receive buffer back on Read, and keeps it while bytes remain", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		h.peerSend(FlagACK|FlagPSH, h.base(), []byte("abcdef"))
		Expect(c.rcvBuf.buf).To(HaveLen(ringInitial))
		spares := len(h.s.spare.bufs)
		p := make([]byte, 3)
		_, _ = c.Read(p)
		Expect(c.rcvBuf.buf).NotTo(BeNil())
		_, _ = c.Read(p)
		Expect(string(p)).To(Equal("def"))
		Expect(c.rcvBuf.buf).To(BeNil())
		Expect(h.s.spare.bufs).To(HaveLen(spares + 1))
	})

	// Kills conn.go:209 `>` -> `>=` in `idle > 0`: zero durations and
	// count keep the configured values (a zero idle would probe at once).
	It("keeps the configured keep-alive idle, interval and count when SetKeepAlive passes zeros", func() {
		h := newHarness(tuned(func(c *Config) {
			c.KeepAliveIdle, c.KeepAliveInterval, c.KeepAliveCount = 10*time.Second, time.Second, 2
		}))
		c := h.established(defaultPeer())
		c.SetKeepAlive(true, 0, 0, 0)
		h.s.Poll(h.now)
		t0 := h.now
		h.advance(12*time.Second + time.Millisecond)
		out := h.take()
		Expect(out).To(HaveLen(3), "segments: %v", describe(out))
		for i, want := range []time.Duration{10 * time.Second, 11 * time.Second, 12 * time.Second} {
			Expect(out[i].at-t0).To(Equal(want), "segment %d", i)
		}
		Expect(out[2].Flags).To(Equal(FlagRST))
		Expect(c.Err()).To(MatchError(ErrTimeout))
	})
})

var _ = Describe("Timer rules after the TCB split", func() {
	// Kills timers.go:226, guard deleted (`if c.keepProbes == 0 &&
	// now-c.lastRcvAt < c.keepIdle { ... return }`): a segment that
	// arrives after the keep-alive timer was armed moves the first probe
	// back, since the timer fires at the old deadline and re-arms from
	// the last segment received (RFC 1122 4.2.3.6: an idle connection).
	It("sends the first keep-alive probe an idle time after the last segment, not after the deadline armed before it", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		c.SetKeepAlive(true, 10*time.Second, time.Second, 3)
		h.s.Poll(h.now)
		t0 := h.now
		h.advance(5 * time.Second)
		h.peerSend(FlagACK|FlagPSH, h.base(), pattern(10))
		h.advance(10*time.Second + time.Millisecond)
		var probes []captured
		for _, s := range h.take() {
			if s.Seq == h.base()-1 {
				probes = append(probes, s)
			}
		}
		Expect(probes).To(HaveLen(1), "probes: %v", describe(probes))
		Expect(probes[0].at - t0).To(Equal(15 * time.Second))
	})

	// Kills timers.go:151 `==` -> `!=` in `c.listener == nil`: a
	// SYN-ACK that is never answered fails an attempt only for an active
	// open (simultaneous open); a passive one returns to LISTEN, as a
	// RST there does ("A RST in SYN-RECEIVED").
	DescribeTable("counts a SYN-ACK given up on as a failed attempt only for an active open",
		func(active bool, fails int) {
			h := newHarness(tuned(func(c *Config) { c.SynAckRetries = 1 }))
			if active {
				_, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
				Expect(err).NotTo(HaveOccurred())
			} else {
				_, err := h.s.Listen(h.local, h.lport, 4)
				Expect(err).NotTo(HaveOccurred())
			}
			h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535, MSS: 1460})
			h.take()
			h.advance(5 * time.Minute)
			Expect(h.s.NumConns()).To(BeZero())
			Expect(h.s.Stats().AttemptFails).To(BeEquivalentTo(fails))
			// ListenDrops is a listener's counter (Linux's): an active
			// open has none to count it.
			Expect(h.s.Stats().ListenDrops).To(BeEquivalentTo(1 - fails))
		},
		Entry("active (SYN-SENT, then a SYN)", true, 1),
		Entry("passive (LISTEN, then a SYN)", false, 0),
	)
})

var _ = Describe("Listen's arguments", func() {
	// Kills accept.go:37, guard deleted (`if port == 0 { ... return }`):
	// port 0 is no port to listen on (RFC 9293 section 3.10.1 needs a
	// local port; the engine does not pick one for a listener).
	It("refuses port 0 and leaves no listener behind", func() {
		h := newHarness(DefaultConfig())
		_, err := h.s.Listen(h.local, 0, 4)
		Expect(err).To(MatchError(ErrInvalidState))
		Expect(h.s.listeners).To(BeEmpty())
	})
})
