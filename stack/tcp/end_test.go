package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Specs of the one termination path (end.go): what each end decides and
// that a connection out of the stack sends nothing itself.

// openPassive completes a handshake from the peer's port rport to l and
// returns the connection, still in l's accept queue, and our ISS.
func openPassive(h *harness, rport uint16) Seq {
	h.rport = rport
	h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535, MSS: 1460})
	sa := h.one()
	Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
	h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 65535})
	h.none()
	return sa.Seq
}

var _ = Describe("The end of a connection (end.go)", func() {
	var (
		h *harness
		l *Listener
	)
	BeforeEach(func() {
		h = newHarness(DefaultConfig())
		var err error
		l, err = h.s.Listen(h.local, h.lport, 8)
		Expect(err).NotTo(HaveOccurred())
	})

	It("sends an abort's RST in the place the connection held in the queue of socket work", func() {
		iss1 := openPassive(h, 40001)
		openPassive(h, 40002)
		c1, _ := l.Accept()
		c2, _ := l.Accept()
		_, err := c1.Write([]byte("one")) // c1 is queued first
		Expect(err).NotTo(HaveOccurred())
		_, err = c2.Write([]byte("two"))
		Expect(err).NotTo(HaveOccurred())
		c1.Abort() // its entry turns into its final RST
		h.s.Poll(h.now)
		segs := h.take()
		Expect(segs).To(HaveLen(2), "segments: %v", describe(segs))
		Expect(segs[0].Flags).To(Equal(FlagRST))
		Expect(segs[0].DstPort).To(Equal(uint16(40001)))
		Expect(segs[0].Seq).To(Equal(iss1 + 1))
		Expect(segs[1].DstPort).To(Equal(uint16(40002)))
		Expect(segs[1].Payload).To(Equal([]byte("two")))
		Expect(c1.Err()).To(MatchError(ErrConnAborted))
		Expect(h.s.NumConns()).To(Equal(1))
	})

	It("leaves an aborted connection with no timer, out of the timer heap, sending nothing more", func() {
		openPassive(h, 40001)
		c, _ := l.Accept()
		_, err := c.Write([]byte("data")) // arms the retransmission timer
		Expect(err).NotTo(HaveOccurred())
		h.s.Poll(h.now)
		Expect(h.one().Payload).To(Equal([]byte("data")))
		Expect(c.heapIdx).To(BeNumerically(">=", 0))
		c.Abort()
		_, armed := c.nextDeadline()
		Expect(armed).To(BeFalse())
		Expect(c.heapIdx).To(BeEquivalentTo(-1))
		Expect(h.s.Poll(h.now)).To(Equal(NoDeadline))
		Expect(h.one().Flags).To(Equal(FlagRST))
		c.Abort()          // use after close: nothing
		c.SetNoDelay(true) // queues the closed connection: it sends nothing
		h.advance(time.Minute)
		h.none()
	})

	It("reports a reset once, with every condition, and sends nothing", func() {
		openPassive(h, 40001)
		c, _ := l.Accept()
		var calls []EventMask
		c.SetEventHook(func(_ *Conn, m EventMask) { calls = append(calls, m) })
		h.inject(Repr{Seq: h.peerISS + 1, Flags: FlagRST})
		h.none()
		Expect(calls).To(Equal([]EventMask{EventError | EventHangup | EventReadable | EventWritable}))
		Expect(c.Err()).To(MatchError(ErrConnReset))
		Expect(c.State()).To(Equal(StateClosed))
		Expect(h.s.NumConns()).To(BeZero())
	})

	It("makes the listener forget a connection reset in its accept queue or its SYN queue", func() {
		openPassive(h, 40001)
		Expect(l.Pending()).To(Equal(1))
		h.inject(Repr{Seq: h.peerISS + 1, Flags: FlagRST})
		Expect(l.Pending()).To(BeZero())

		h.rport = 40002
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535})
		Expect(h.one().Flags).To(Equal(FlagSYN | FlagACK))
		Expect(l.synQ).To(Equal(1))
		h.inject(Repr{Seq: h.peerISS + 1, Flags: FlagRST})
		Expect(l.synQ).To(BeZero())
		Expect(h.s.NumConns()).To(BeZero())
		Expect(h.s.Poll(h.now)).To(Equal(NoDeadline))
	})

	It("balances the SYN queue of a listener closed during the handshake", func() {
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535})
		sa := h.one()
		l.Close()
		h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 65535})
		Expect(h.one().Flags).To(Equal(FlagRST))
		Expect(l.synQ).To(BeZero())
		Expect(l.Pending()).To(BeZero())
	})
})

var _ = Describe("A connection timer", func() {
	It("is stopped at its zero value and can be armed at time 0, which no sentinel takes", func() {
		var t timer
		Expect(t.armed()).To(BeFalse())
		Expect(t.due(time.Hour)).To(BeFalse())
		t.arm(0)
		Expect(t.due(0)).To(BeTrue())
		t.stop()
		Expect(t.due(time.Hour)).To(BeFalse())
	})

	It("reports the earliest armed deadline of a connection", func() {
		var ts connTimers
		_, ok := ts.nextDeadline()
		Expect(ok).To(BeFalse())
		ts.keepTimer.arm(3 * time.Second)
		ts.delackTimer.arm(2 * time.Second)
		d, ok := ts.nextDeadline()
		Expect(ok).To(BeTrue())
		Expect(d).To(Equal(2 * time.Second))
		ts.stopAll()
		_, ok = ts.nextDeadline()
		Expect(ok).To(BeFalse())
	})
})
