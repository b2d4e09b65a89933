package tcp

import "time"

// endCause is why a connection ends. Every way a connection ends goes
// through Conn.end with one of these; ending decides from it and from the
// state what the end does.
type endCause uint8

const (
	// endAbort: the application gave the connection up (Abort, or Close
	// with unread data, RFC 2525 section 2.17), or its listener did
	// (Listener.Close with it in the accept queue, or the listener closed
	// while its handshake ran). RFC 9293 section 3.10.5 ABORT.
	endAbort endCause = iota
	// endUnsynced: CLOSE in SYN-SENT deletes the TCB (RFC 9293 section
	// 3.10.4).
	endUnsynced
	// endTimeout: the retransmission timer gave up on the SYN, the
	// SYN-ACK or data (RFC 6298 section 5, RFC 1122 4.2.3.5).
	endTimeout
	// endKeepaliveTimeout: keep-alive probes went unanswered (RFC 1122
	// 4.2.3.6).
	endKeepaliveTimeout
	// endReset: an acceptable RST arrived (RFC 9293 sections 3.10.7.3 and
	// 3.10.7.4 second).
	endReset
	// endExpired: TIME-WAIT's 2*MSL, or an orphaned FIN-WAIT-2's timeout,
	// ran out.
	endExpired
	// endFinAcked: our FIN was acknowledged in LAST-ACK.
	endFinAcked
	// endDataAfterClose: data arrived for a socket the application closed
	// (RFC 2525 section 2.17, Linux tcp_rcv_state_process).
	endDataAfterClose
	// endReopened: a new SYN took over a connection in TIME-WAIT (RFC
	// 9293 section 3.10.7.4 note, RFC 6191).
	endReopened
)

// rstWhen is whether and when an ending connection sends a final RST.
type rstWhen uint8

const (
	rstNone rstWhen = iota
	// rstNow: in the segment processing or timer that ends it.
	rstNow
	// rstAtPoll: at the next Poll, in the connection's place in the
	// queue of socket work, because socket calls never send themselves.
	rstAtPoll
)

// endActions are what the end of a connection does once it is out of the
// stack: decided by ending before the state changes, applied once by
// applyEnd after it, so that no listener or stack code runs while the
// connection is half torn down.
type endActions struct {
	// err is what Err reports from now on, unless it reports an error
	// already (nil: none).
	err error
	// events are the readiness conditions reported once it is gone.
	events EventMask
	// rst is whether a final <SEQ=rstSeq><CTL=RST> goes out, and when.
	rst    rstWhen
	rstSeq Seq
	// release gives unread received bytes back to the memory budget:
	// the application will not read them.
	release bool
	// listener must forget the connection (nil: it has none), which sits
	// in its SYN queue when inSynQ.
	listener *Listener
	inSynQ   bool
}

// ending decides how c ends for why, from its state before the end.
func (c *Conn) ending(why endCause) endActions {
	const failed = EventError | EventHangup | EventReadable | EventWritable
	a := endActions{listener: c.listener, inSynQ: c.listener != nil && c.state == StateSynReceived}
	// A half-open passive connection that times out or is reset returns
	// to LISTEN (RFC 9293 section 3.10.7.4 second): nobody holds it, so
	// nothing is reported.
	passiveHalfOpen := c.state == StateSynReceived && c.listener != nil
	switch why {
	case endAbort:
		a.err, a.release = ErrConnAborted, true
		if c.state.synchronized() || c.state == StateSynReceived {
			a.rst, a.rstSeq = rstAtPoll, c.sndNxt
		}
	case endTimeout:
		if !passiveHalfOpen {
			a.err, a.events = ErrTimeout, failed
		}
	case endKeepaliveTimeout:
		a.err, a.events = ErrTimeout, failed
		a.rst, a.rstSeq = rstNow, c.sndNxt
	case endReset:
		switch c.state {
		case StateSynSent, StateSynReceived:
			if !passiveHalfOpen {
				a.err, a.events = ErrConnRefused, failed
			}
		case StateEstablished, StateCloseWait, StateFinWait1, StateFinWait2:
			a.err, a.events = ErrConnReset, failed
		default: // CLOSING, LAST-ACK, TIME-WAIT: it was closing anyway
			a.events = EventHangup
		}
	case endExpired:
		a.events = EventHangup
	case endFinAcked:
		a.events = EventHangup | EventReadable
	case endDataAfterClose:
		a.rst, a.rstSeq = rstNow, c.sndNxt
	case endUnsynced, endReopened:
	}
	return a
}

// end is the one way a connection ends: ending decides what follows,
// removeConn takes c out of the stack (CLOSED), and applyEnd does what
// was decided. now is when a RST sent at once goes out; the socket calls
// that end a connection send nothing themselves and pass 0.
func (c *Conn) end(now time.Duration, why endCause) {
	a := c.ending(why)
	c.s.removeConn(c)
	c.s.applyEnd(now, c, &a)
}

// removeConn takes c out of the stack: the demultiplexing table, the
// timer heap (with every timer stopped) and its buffers, and moves it to
// CLOSED. Only end calls it.
func (s *Stack) removeConn(c *Conn) {
	if cur, _ := s.conns.get(c.id); cur == c {
		s.conns.remove(c.id)
		if s.budget != nil {
			s.budget.inUse.Add(-1)
		}
	}
	c.setState(StateClosed)
	c.sndBuf.release(&s.spare)
	if c.rcvBuf.length() == 0 {
		c.rcvBuf.release(&s.spare)
	}
	c.syncRcvPromise()
	c.ooo.reset()
	c.sb.reset()
	c.stopAll()
	if c.heapIdx >= 0 {
		s.timers.remove(int(c.heapIdx))
	}
}

// applyEnd does what ending decided for c, which is out of the stack.
func (s *Stack) applyEnd(now time.Duration, c *Conn, a *endActions) {
	if a.listener != nil {
		a.listener.forget(c, a.inSynQ)
	}
	if a.release {
		c.rcvBuf.release(&s.spare)
		c.ooo.reset()
	}
	if c.err == nil {
		c.err = a.err
	}
	switch a.rst {
	case rstNow:
		s.sendFinalRST(now, c.id, a.rstSeq)
	case rstAtPoll:
		s.queueFinalRST(c, a.rstSeq)
	}
	if a.events != 0 {
		c.notify(a.events)
	}
}

// pollItem is one entry of the stack's queue of socket work for the next
// Poll: a connection to flush, or (c nil) the final RST an aborted
// connection left behind, sent by the stack since the connection is gone.
type pollItem struct {
	c      *Conn
	id     fourTuple
	rstSeq Seq
}

// queueFinalRST queues c's final RST for the next Poll, in the place c
// held in the queue if it was queued, at the end otherwise.
func (s *Stack) queueFinalRST(c *Conn, seq Seq) {
	it := pollItem{id: c.id, rstSeq: seq}
	if c.dirtyAt > 0 {
		s.dirty[c.dirtyAt-1] = it
		c.dirtyAt = 0
		return
	}
	s.dirty = append(s.dirty, it)
}

// sendFinalRST sends <SEQ=seq><CTL=RST> for a connection that ended (RFC
// 9293 section 3.10.5 ABORT); seq is its SND.NXT.
func (s *Stack) sendFinalRST(now time.Duration, id fourTuple, seq Seq) {
	var o Repr
	o.SrcPort, o.DstPort = id.localPort, id.remotePort
	o.Seq = seq
	o.Flags = FlagRST
	s.stats.OutRsts++
	s.send(now, id, &o, nil, 0, 0)
}
