package tcp

import (
	"io"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Conn is one TCP connection (a TCB, RFC 9293 section 3.3.1) and its
// socket API. Socket calls never block and never send by themselves: they
// change buffers and state, and the next (*Stack).Poll emits the
// segments.
//
// The TCB is split by concern, as gVisor's sender and receiver split it:
// the sender (send sequence space, send buffer, retransmission, congestion
// control and recovery), the receiver (receive sequence space, receive
// buffer, reassembly, advertised window, delayed-ACK accounting) and the
// timers (every deadline) are embedded by value, so a segment costs no
// extra allocation or pointer chase; what is left here is the
// connection's identity and state, its place in the stack's timer heap,
// the options negotiated and the application's side, with what few
// connections set behind opts. docs/tcp.md, "How the connection is laid
// out", maps the parts; docs/performance.md, "Memory per connection",
// says why it is packed as it is (a million connections fit in 576
// bytes each).
type Conn struct {
	s     *Stack
	id    fourTuple
	state State
	// inAcceptQ: a passive connection established and not yet accepted.
	inAcceptQ bool
	seqNo     uint64 // creation order, for deterministic tie-breaks

	// Listener that created a passive connection, until accepted.
	listener *Listener

	sender
	receiver
	connTimers

	// Negotiated options (the sender's MSS sits in sender).
	advMSS     uint16 // MSS we advertise
	sndWscale  uint8  // shift for windows the peer advertises
	rcvWscale  uint8  // shift for windows we advertise
	wsOK       bool
	tsOK       bool
	sackOK     bool
	orphan     bool // Close called: nobody reads any more
	tsOffset   uint32
	tsRecent   uint32
	tsRecentAt time.Duration

	// Keep-alive's progress (its settings sit in opts, or the stack's
	// Config when SetKeepAlive changed none; noDelay and keepAlive sit
	// with the flags below, keepProbes with them).
	lastRcvAt time.Duration

	// Application side.
	err error
	// dirtyAt is c's place in the stack's queue of work for the next
	// Poll, plus one (0: not queued), so that an abort can turn its
	// entry into the final RST in place.
	dirtyAt int32
	// heapIdx is the index in the stack's timer heap (-1: not in it);
	// the heap's entry holds its key, which only moves earlier
	// (Stack.afterConn).
	heapIdx int32
	// keepProbes counts unanswered keep-alive probes.
	keepProbes int32
	evPending  EventMask
	evQueued   bool
	noDelay    bool
	keepAlive  bool
	// set is the EventSet the connection reports to (nil: the stack's
	// ready list), with the application's data for its events.
	set     *EventSet
	setData any

	// opts holds what few connections set (keep-alive timing other
	// than the stack's, an event hook, a direct receiver) or need (the
	// time of the last ACK to an invalid segment), allocated by the
	// first call that sets one: nil for nearly every connection of a
	// million.
	opts *connOpts
}

// connOpts are a connection's rarely set options (Conn.opts).
type connOpts struct {
	keepIdle  time.Duration
	keepIntvl time.Duration
	keepCount int
	hook      func(*Conn, EventMask)
	// direct, when set, takes in-order bytes straight from an arriving
	// segment while the receive buffer is empty (SetDirectReceiver).
	direct func(p []byte) int
	// lastOOWAck is when the last ACK to an invalid segment was sent
	// (Linux's last_oow_ack_time), oowAcked whether one was: set by the
	// first such ACK, which few connections ever send.
	lastOOWAck time.Duration
	oowAcked   bool
}

// options returns c's options, allocating them (from the stack's
// defaults) on first use.
func (c *Conn) options() *connOpts {
	if c.opts == nil {
		cfg := &c.s.cfg
		c.opts = &connOpts{keepIdle: cfg.KeepAliveIdle, keepIntvl: cfg.KeepAliveInterval, keepCount: cfg.KeepAliveCount}
	}
	return c.opts
}

// keepIdle, keepIntvl and keepCount are the connection's keep-alive
// settings (RFC 1122 4.2.3.6).
func (c *Conn) keepIdle() time.Duration {
	if c.opts == nil {
		return c.s.cfg.KeepAliveIdle
	}
	return c.opts.keepIdle
}

func (c *Conn) keepIntvl() time.Duration {
	if c.opts == nil {
		return c.s.cfg.KeepAliveInterval
	}
	return c.opts.keepIntvl
}

func (c *Conn) keepCount() int {
	if c.opts == nil {
		return c.s.cfg.KeepAliveCount
	}
	return c.opts.keepCount
}

// hook and direct are the event hook and the direct receiver, nil when
// unset.
func (c *Conn) hook() func(*Conn, EventMask) {
	if c.opts == nil {
		return nil
	}
	return c.opts.hook
}

func (c *Conn) direct() func(p []byte) int {
	if c.opts == nil {
		return nil
	}
	return c.opts.direct
}

// sender is the sending half of the TCB (gVisor's tcp.sender): the send
// sequence space, the send buffer, retransmission and RTT sampling,
// congestion control and loss recovery, the SACK scoreboard and the
// persist backoff.
type sender struct {
	// Send sequence space (RFC 9293 section 3.3.1), plus SND.MAX, the
	// highest sequence number sent (SND.NXT can fall back on timeout).
	iss                    Seq
	sndUna, sndNxt, sndMax Seq
	sndWnd                 int
	maxSndWnd              int
	sndWl1, sndWl2         Seq
	sndBuf                 ring
	sndBufSeq              Seq // sequence number of the first byte of sndBuf
	finQueued              bool
	// rttTiming and inRecovery belong with RTT sampling and recovery
	// below; they sit here, beside finQueued, to fill a word.
	rttTiming  bool
	inRecovery bool
	// mss is the payload bytes per segment we send (SMSS, options
	// excluded), as negotiate settles it.
	mss int

	// Retransmission (RFC 6298) and RTT sampling with Karn's algorithm.
	rtt      rttEstimator
	rttSeq   Seq
	rttStart time.Duration
	retries  int

	// Congestion control and loss recovery (RFC 5681, 6582, 6675).
	cc      congestionControl
	ccs     ccState
	recover Seq
	highRxt Seq
	dupAcks int
	sb      scoreboard

	// persistBackoff counts unanswered zero-window probes.
	persistBackoff int
}

// receiver is the receiving half of the TCB (gVisor's tcp.receiver): the
// receive sequence space, the receive buffer and its reassembly, the
// advertised right edge and the memory it promises, and what an ACK owes.
type receiver struct {
	irs        Seq
	rcvNxt     Seq
	rcvAdvEdge Seq // right edge of the last advertised window
	peerFinSeq Seq
	// lastAckSent is Last.ACK.sent of RFC 7323 section 4.3.
	lastAckSent Seq
	finRcvd     bool
	peerFin     bool // a FIN arrived out of order at peerFinSeq
	// ackNow: an ACK is owed at once (RFC 1122 4.2.3.2, RFC 5681
	// section 4.2), unackedBytes below the delayed one's count.
	ackNow bool
	rcvBuf ring
	ooo    assembler

	// rcvPromise is the part of the advertised window the receive
	// buffer cannot yet hold, as the memory budget last heard it.
	rcvPromise int64

	// ACK generation (RFC 1122 4.2.3.2, RFC 5681 section 4.2).
	unackedBytes int
}

func (s *Stack) newConn(id fourTuple, iss Seq) *Conn {
	c := &Conn{
		s:  s,
		id: id,
		sender: sender{
			iss:       iss,
			sndUna:    iss,
			sndNxt:    iss,
			sndMax:    iss,
			sndBufSeq: iss + 1,
			sndBuf:    newRing(s.cfg.SendBuffer, &s.mem),
			rtt:       newRTTEstimator(s.cfg.InitialRTO, &s.rtoBounds),
		},
		receiver: receiver{
			rcvBuf: newRing(s.cfg.RecvBuffer, &s.mem),
		},
		heapIdx:   -1,
		advMSS:    uint16(s.advMSS),
		noDelay:   s.cfg.NoDelay,
		keepAlive: s.cfg.KeepAlive,
	}
	s.connSeq++
	c.seqNo = s.connSeq
	c.cc, _ = newCC(s.cfg.CongestionControl)
	c.tsOffset = s.tsOffsetFor(id)
	// Our window scale: the smallest shift that lets the whole receive
	// buffer be advertised (RFC 7323 section 2.3, at most 14).
	for c.rcvWscale < 14 && s.cfg.RecvBuffer>>c.rcvWscale > 0xffff {
		c.rcvWscale++
	}
	s.conns.put(id, c)
	if s.budget != nil {
		s.budget.inUse.Add(1)
	}
	return c
}

// LocalAddr returns the local address and port.
func (c *Conn) LocalAddr() Addr { return Addr{c.id.localAddr, c.id.localPort} }

// RemoteAddr returns the remote address and port.
func (c *Conn) RemoteAddr() Addr { return Addr{c.id.remoteAddr, c.id.remotePort} }

// State returns the connection's state.
func (c *Conn) State() State { return c.state }

// Err returns the error that ended the connection, if any.
func (c *Conn) Err() error { return c.err }

// SetNoDelay switches Nagle's algorithm off (true) or on (RFC 896,
// RFC 1122 4.2.3.4).
func (c *Conn) SetNoDelay(on bool) { c.noDelay = on; c.s.markDirty(c) }

// SetKeepAlive configures keep-alive (RFC 1122 4.2.3.6); zero durations
// and count keep the current values.
func (c *Conn) SetKeepAlive(on bool, idle, interval time.Duration, count int) {
	c.keepAlive = on
	if idle > 0 || interval > 0 || count > 0 {
		o := c.options()
		if idle > 0 {
			o.keepIdle = idle
		}
		if interval > 0 {
			o.keepIntvl = interval
		}
		if count > 0 {
			o.keepCount = count
		}
	}
	c.keepTimer.stop()
	c.s.markDirty(c)
}

// SetCongestionControl selects "newreno" or "cubic" for this connection.
// Changing it mid-connection restarts the controller from the current
// window.
func (c *Conn) SetCongestionControl(name string) error {
	cc, err := newCC(name)
	if err != nil {
		return err
	}
	cwnd, ssthresh := c.ccs.cwnd, c.ccs.ssthresh
	c.cc = cc
	if c.ccs.mss > 0 {
		cc.init(&c.ccs, c.s.cfg.InitialWindow)
		c.ccs.cwnd, c.ccs.ssthresh = cwnd, ssthresh
	}
	return nil
}

// SetEventHook registers fn, called synchronously whenever readiness
// conditions of c become true (in addition to the stack's ready list).
func (c *Conn) SetEventHook(fn func(*Conn, EventMask)) {
	if fn != nil || c.opts != nil {
		c.options().hook = fn
	}
}

// SetDirectReceiver lets fn take in-order received bytes straight from
// the segment that carries them, while the receive buffer is empty and no
// out-of-order data waits: fn copies what it can (its own buffer, such as
// a socket layer's receive ring) and returns the count; the rest goes to
// the receive buffer as usual and is read with Read. It saves a copy per
// byte through the receive buffer, as Linux's receive path copies to a
// waiting reader directly. fn runs inside segment processing and must not
// call back into the stack. nil (the default) turns it off; the
// simulation's applications never set it.
func (c *Conn) SetDirectReceiver(fn func(p []byte) int) {
	if fn != nil || c.opts != nil {
		c.options().direct = fn
	}
}

// Readable reports whether Read would return data, EOF or an error.
func (c *Conn) Readable() bool {
	return c.rcvBuf.length() > 0 || c.finRcvd || c.err != nil
}

// Writable reports whether Write would accept at least one byte.
func (c *Conn) Writable() bool {
	return c.canWrite() && c.sndBuf.free() > 0
}

func (c *Conn) canWrite() bool {
	switch c.state {
	case StateSynSent, StateSynReceived, StateEstablished, StateCloseWait:
		return !c.finQueued && c.err == nil
	}
	return false
}

// Connected reports whether the handshake has completed.
func (c *Conn) Connected() bool { return c.state.synchronized() }

// Read copies received data into p. It returns io.EOF once the peer's FIN
// has been read past, the connection's error after a reset or timeout,
// and ErrWouldBlock when nothing is available yet.
func (c *Conn) Read(p []byte) (int, error) {
	if c.rcvBuf.length() == 0 {
		switch {
		case c.finRcvd:
			return 0, io.EOF
		case c.err != nil:
			return 0, c.err
		case c.orphan || c.state == StateClosed:
			return 0, ErrClosed
		}
		return 0, ErrWouldBlock
	}
	before := c.rcvBuf.free()
	n := c.rcvBuf.read(p)
	if c.rcvBuf.length() == 0 && c.ooo.empty() {
		c.rcvBuf.rewind()
		c.rcvBuf.recycle(&c.s.spare)
	}
	if c.state == StateClosed && c.rcvBuf.length() == 0 {
		// The last bytes of a connection gone from the stack: its
		// buffer goes back to the memory budget.
		c.rcvBuf.release(&c.s.spare)
	}
	c.syncRcvPromise()
	c.s.charge(hw.CostCopyByte, n)
	// Window update (RFC 9293 section 3.8.6.2.2 / RFC 1122 4.2.3.3):
	// announce the freed space once it is worth a segment, without
	// waiting for the peer to probe.
	if c.state.synchronized() && c.windowUpdateWorthIt(before) {
		c.ackNow = true
		c.s.markDirty(c)
	}
	return n, nil
}

// windowUpdateWorthIt reports whether the right edge we could announce
// now moved enough past the last announced one: at least min(RecvBuffer/2,
// MSS), receiver-side silly window avoidance.
func (c *Conn) windowUpdateWorthIt(freeBefore int) bool {
	edge := c.rcvOfferEdge()
	grow := edge.Sub(c.rcvAdvEdge)
	thr := minInt(c.s.cfg.RecvBuffer/2, int(c.advMSS))
	return grow >= thr && (c.rcvAdvEdge.Sub(c.rcvNxt) < thr || grow >= c.s.cfg.RecvBuffer/4)
}

// Write copies as much of p as fits into the send buffer and returns the
// count; ErrWouldBlock when nothing fits. Data written before the
// handshake completes is sent once it does.
func (c *Conn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if !c.canWrite() {
		return 0, ErrClosed
	}
	c.sndBuf.prime(&c.s.spare, c.sndBuf.length()+len(p))
	q := p
	if len(q) > c.sndBuf.free() {
		q = q[:c.sndBuf.free()]
	}
	if k := c.sndRoom(len(q)); k < len(q) {
		// The memory budget holds the buffer where it is (docs/tcp.md,
		// "Memory pressure"): a short write, or none.
		c.s.stats.SndMemRefused++
		q = q[:k]
	}
	n := c.sndBuf.write(q)
	c.s.charge(hw.CostCopyByte, n)
	if n == 0 && len(p) > 0 {
		return 0, ErrWouldBlock
	}
	if n > 0 {
		c.s.markDirty(c)
	}
	return n, nil
}

// SendBuffered returns the bytes written but not yet acknowledged.
func (c *Conn) SendBuffered() int { return c.sndBuf.length() }

// RecvBuffered returns the bytes received and not yet read.
func (c *Conn) RecvBuffered() int { return c.rcvBuf.length() }

// CloseWrite half-closes the connection: a FIN follows the buffered data
// (RFC 9293 section 3.10.4 CLOSE, the sending side only). Reading goes on.
func (c *Conn) CloseWrite() error {
	switch c.state {
	case StateSynSent:
		// Nothing was synchronized: just delete the TCB.
		c.end(0, endUnsynced)
		return nil
	case StateSynReceived, StateEstablished:
		c.finQueued = true
		if c.state == StateEstablished {
			c.setState(StateFinWait1)
		}
	case StateCloseWait:
		c.finQueued = true
		c.setState(StateLastAck)
	case StateClosed:
		return ErrClosed
	default:
		return nil // already closing
	}
	c.s.markDirty(c)
	return nil
}

// Close closes both directions. Unread received data makes it an abort
// (RST), as Linux and RFC 2525 section 2.17 do; data arriving after Close
// is answered with RST too. The connection lives on in the stack until
// its FIN is acknowledged and TIME-WAIT ends.
func (c *Conn) Close() error {
	if c.state == StateClosed {
		// Nobody reads any more: unread bytes go back to the budget.
		c.rcvBuf.release(&c.s.spare)
		c.ooo.reset()
		return nil
	}
	if c.rcvBuf.length() > 0 && c.state.synchronized() {
		c.Abort()
		return nil
	}
	c.orphan = true
	if c.state == StateFinWait2 {
		c.closeTimer.stop() // armed by the next timer pass
	}
	err := c.CloseWrite()
	c.s.markDirty(c)
	return err
}

// Abort resets the connection (RFC 9293 section 3.10.5 ABORT): a RST is
// sent at the next Poll in synchronized states, and the TCB is deleted.
func (c *Conn) Abort() {
	if c.state == StateClosed {
		// Use after close: the public API's guard.
		return
	}
	c.end(0, endAbort)
}

// ConnInfo is a snapshot of a connection's internals, in the spirit of
// Linux's struct tcp_info.
type ConnInfo struct {
	State       string        `json:"state"`
	SRTT        time.Duration `json:"srtt"`
	RTTVar      time.Duration `json:"rttvar"`
	RTO         time.Duration `json:"rto"`
	Cwnd        int           `json:"cwnd"`
	Ssthresh    int           `json:"ssthresh"`
	MSS         int           `json:"mss"`
	SndWnd      int           `json:"snd_wnd"`
	SndWscale   uint8         `json:"snd_wscale"`
	RcvWscale   uint8         `json:"rcv_wscale"`
	Timestamps  bool          `json:"timestamps"`
	SACK        bool          `json:"sack"`
	InRecovery  bool          `json:"in_recovery"`
	Unacked     int           `json:"unacked"`
	CC          string        `json:"congestion_control"`
	SACKedBytes int           `json:"sacked_bytes"`
}

// Info returns a snapshot of c's internals.
func (c *Conn) Info() ConnInfo {
	return ConnInfo{
		State: c.state.String(), SRTT: c.rtt.srtt, RTTVar: c.rtt.rttvar, RTO: c.rtt.current(),
		Cwnd: c.ccs.cwnd, Ssthresh: c.ccs.ssthresh, MSS: c.mss, SndWnd: c.sndWnd,
		SndWscale: c.sndWscale, RcvWscale: c.rcvWscale, Timestamps: c.tsOK, SACK: c.sackOK,
		InRecovery: c.inRecovery, Unacked: c.sndMax.Sub(c.sndUna), CC: c.cc.name(),
		SACKedBytes: c.sb.sackedIn(c.sndUna, c.sndMax),
	}
}
