package tcp

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// pawsIdle is how long TS.Recent stays valid without being refreshed
// (RFC 7323 section 5.5: 24 days).
const pawsIdle = 24 * 24 * time.Hour

// input processes one segment for c and then sends whatever it
// triggered (ACKs, data the opened window allows).
// A segment that ended the connection leaves nothing to send: output is
// a no-op in CLOSED.
func (c *Conn) input(now time.Duration, r *Repr) {
	c.process(now, r)
	c.output(now)
}

// process is RFC 9293 section 3.10.7.3 (SYN-SENT) and 3.10.7.4 (other
// states), with RFC 5961 and RFC 7323 checks.
func (c *Conn) process(now time.Duration, r *Repr) {
	s := c.s
	switch c.state {
	case StateSynSent:
		c.inputSynSent(now, r)
		return
	case StateSynReceived:
		// A retransmitted SYN: answer with the SYN-ACK again.
		if r.Flags&(FlagSYN|FlagACK|FlagRST) == FlagSYN && r.Seq == c.irs {
			c.sendSYN(now, true)
			return
		}
	case StateTimeWait:
		// A new SYN may reopen the connection from TIME-WAIT when its
		// sequence number is above what we saw (RFC 9293 section
		// 3.10.7.4 note, RFC 6191).
		if r.Flags&(FlagSYN|FlagACK|FlagRST) == FlagSYN && r.Seq.GreaterThan(c.rcvNxt) {
			if l := s.lookupListener(c.id.localAddr, c.id.localPort); l != nil {
				c.end(now, endReopened)
				l.input(now, c.id, r)
				return
			}
		}
	}

	// PAWS (RFC 7323 section 5.3): reject a timestamp older than
	// TS.Recent unless TS.Recent is over 24 days stale, and ACK it.
	if c.tsOK && r.HasTS && r.Flags&FlagRST == 0 && int32(r.TSVal-c.tsRecent) < 0 {
		if now-c.tsRecentAt > pawsIdle {
			c.tsRecent = r.TSVal
		} else {
			s.stats.PawsRejected++
			s.stats.Drops.Paws++
			if !c.oowAckLimited(now, r, &s.stats.AckSkippedPaws) {
				c.ackNow = true
			}
			return
		}
	}

	// First, check the sequence number (RFC 9293 section 3.10.7.4).
	if !c.acceptable(r) {
		s.stats.Drops.OutOfWindow++
		if r.Flags&FlagRST == 0 {
			// RFC 9293 section 3.10.7.4 asks for an ACK; Linux sends
			// it within tcp_invalid_ratelimit (tcp_validate_incoming).
			if !c.oowAckLimited(now, r, &s.stats.AckSkippedSeq) {
				c.ackNow = true
			}
			if c.state == StateTimeWait {
				c.closeTimer.arm(now + 2*s.cfg.MSL)
			}
		}
		return
	}
	c.lastRcvAt = now
	c.keepProbes = 0

	// RFC 7323 section 4.3 (R3): remember the timestamp to echo.
	if c.tsOK && r.HasTS && r.Seq.LessEq(c.lastAckSent) && int32(r.TSVal-c.tsRecent) >= 0 {
		c.tsRecent = r.TSVal
		c.tsRecentAt = now
	}

	// Second, the RST bit (RFC 5961 section 3.2): only an exact match
	// resets; anything else in the window draws a challenge ACK.
	if r.Flags&FlagRST != 0 {
		s.stats.InRsts++
		if r.Seq != c.rcvNxt {
			s.stats.Drops.RstInvalid++
			if c.challengeAllowed(now) {
				c.ackNow = true
			}
			return
		}
		c.onRST(now)
		return
	}

	// Fourth, the SYN bit (RFC 5961 section 4.2): challenge ACK, drop.
	if r.Flags&FlagSYN != 0 {
		s.stats.Drops.SynInvalid++
		if c.challengeAllowed(now) {
			c.ackNow = true
		}
		return
	}

	// Fifth, the ACK field.
	if r.Flags&FlagACK == 0 {
		s.stats.Drops.NoAckFlag++
		return
	}
	if c.state == StateSynReceived {
		if !(c.sndUna.LessThan(r.Ack) && r.Ack.LessEq(c.sndMax)) {
			s.stats.Drops.BadAck++
			s.replyRST(now, c.id, r)
			return
		}
		if l := c.listener; l != nil && len(l.acceptQ) >= l.backlog {
			// Accept queue full: drop the ACK and stay half-open; the
			// SYN-ACK timer and the peer's retransmissions retry
			// (Linux ListenOverflows, tcp_abort_on_overflow = 0).
			s.stats.ListenOverflows++
			s.stats.ListenDrops++
			s.stats.Drops.AcceptQueueFull++
			return
		}
		c.sndUna = r.Ack
		if c.rttTiming {
			c.rttSampled(now)
		}
		c.handshakeDone()
		if l := c.listener; l != nil {
			s.stats.PassiveOpens++
			if l.closed {
				// The listener went away during the handshake:
				// reset, as Listener.Close resets its queue.
				c.end(now, endAbort)
				return
			}
			l.established(c)
		}
		c.establish(now, r)
	}
	if !c.processAck(now, r) {
		return
	}
	finAcked := c.finQueued && c.sndUna == c.sndBufSeq.Add(c.sndBuf.length()+1)
	switch c.state {
	case StateFinWait1:
		if finAcked {
			c.setState(StateFinWait2)
		}
	case StateClosing:
		if finAcked {
			c.enterTimeWait(now)
		}
	case StateLastAck:
		if finAcked {
			c.end(now, endFinAcked)
			return
		}
	case StateTimeWait:
		// A retransmission of the peer's FIN lies below RCV.NXT, so it
		// failed the acceptability test above, which acknowledged it
		// and restarted the 2 MSL timeout. A FIN that gets here is in
		// the window, past the one already received: acknowledge it
		// and restart the timeout the same way.
		if r.Flags&FlagFIN != 0 {
			c.ackNow = true
			c.closeTimer.arm(now + 2*s.cfg.MSL)
		}
		return
	}

	// Seventh, the segment text; eighth, the FIN.
	if len(r.Payload) == 0 && r.Flags&FlagFIN == 0 {
		return
	}
	switch c.state {
	case StateEstablished, StateFinWait1, StateFinWait2:
		if c.orphan && len(r.Payload) > 0 && r.Seq.Add(len(r.Payload)).GreaterThan(c.rcvNxt) {
			// Data for a closed socket: reset (RFC 2525 section 2.17,
			// Linux tcp_rcv_state_process).
			s.stats.Drops.AfterClose++
			c.end(now, endDataAfterClose)
			return
		}
		c.receive(now, r)
	default:
		// CLOSE-WAIT, CLOSING, LAST-ACK: the peer already sent FIN;
		// ignore the text (RFC 9293 section 3.10.7.4, seventh). A
		// retransmitted FIN never gets here: it lies below RCV.NXT and
		// was acknowledged as out of window above. A FIN in the window
		// is past the one received; acknowledge it without moving
		// RCV.NXT.
		if r.Flags&FlagFIN != 0 {
			c.ackNow = true
		}
	}
}

// acceptable is the segment acceptance test of RFC 9293 section 3.10.7.4
// (four cases by segment length and receive window). With a zero window
// a segment starting exactly at RCV.NXT is accepted for its ACK and RST
// ("special allowance"), its data trimmed later.
func (rcv *receiver) acceptable(r *Repr) bool {
	wnd := rcv.rcvAdvEdge.Sub(rcv.rcvNxt)
	if wnd < 0 {
		wnd = 0
	}
	n := r.SegLen()
	switch {
	case n == 0 && wnd == 0:
		return r.Seq == rcv.rcvNxt
	case n == 0:
		return r.Seq.InWindow(rcv.rcvNxt, wnd)
	case wnd == 0:
		return r.Seq == rcv.rcvNxt
	default:
		return r.Seq.InWindow(rcv.rcvNxt, wnd) || r.Seq.Add(n-1).InWindow(rcv.rcvNxt, wnd)
	}
}

// onRST handles an acceptable RST (RFC 9293 section 3.10.7.4 second):
// it counts what the RST ended, and ending decides the rest (a passive
// half-open connection returns to LISTEN unreported).
func (c *Conn) onRST(now time.Duration) {
	s := c.s
	switch c.state {
	case StateSynReceived:
		if c.listener == nil {
			s.stats.AttemptFails++
		}
	case StateEstablished, StateCloseWait:
		s.stats.EstabResets++
	}
	c.end(now, endReset)
}

// processAck is the ACK processing of ESTABLISHED and later states
// (RFC 9293 section 3.10.7.4 fifth; RFC 5961 section 5.2; loss detection
// of RFC 5681, 6582, 6675). It returns false if the segment is dropped.
func (c *Conn) processAck(now time.Duration, r *Repr) bool {
	s := c.s
	ack := r.Ack
	if ack.GreaterThan(c.sndMax) {
		// Acknowledges something not yet sent: ACK and drop, within
		// the limit on ACKs to invalid segments.
		s.stats.Drops.BadAck++
		if !c.oowAckLimited(now, r, &s.stats.AckSkippedSeq) {
			c.ackNow = true
		}
		return false
	}
	if ack.LessThan(c.sndUna - Seq(uint32(c.maxSndWnd))) {
		// RFC 5961 section 5.2: too old to be acceptable.
		s.stats.Drops.BadAck++
		if c.challengeAllowed(now) {
			c.ackNow = true
		}
		return false
	}
	newSACK := false
	if c.sackOK && r.NumSACK > 0 {
		newSACK = c.sb.update(c.sndUna, c.sndMax, r.SACK[:r.NumSACK], c.s.cfg.MaxOOORanges)
	}
	wnd := int(r.Window) << c.sndWscale
	if ack.GreaterThan(c.sndUna) {
		c.newAck(now, ack)
	} else if ack == c.sndUna {
		// A duplicate ACK (RFC 5681 section 2), or with SACK one that
		// reports new SACKed data (RFC 6675 section 2).
		if len(r.Payload) == 0 && r.Flags&(FlagSYN|FlagFIN) == 0 &&
			c.sndMax != c.sndUna && c.sndWnd > 0 && !c.persistTimer.armed() &&
			(wnd == c.sndWnd || newSACK) {
			c.onDupAck(now)
		}
	}
	// Window update (RFC 9293 section 3.10.7.4): only from a segment
	// newer than the last one that updated it.
	if c.sndWl1.LessThan(r.Seq) || (c.sndWl1 == r.Seq && c.sndWl2.LessEq(ack)) {
		c.sndWnd = wnd
		c.sndWl1 = r.Seq
		c.sndWl2 = ack
		if wnd > c.maxSndWnd {
			c.maxSndWnd = wnd
		}
		if wnd > 0 && c.persistTimer.armed() {
			c.persistTimer.stop()
			c.persistBackoff = 0
		}
	}
	return true
}

// newAck handles an ACK that advances SND.UNA.
func (c *Conn) newAck(now time.Duration, ack Seq) {
	acked := ack.Sub(c.sndUna)
	flight := c.sndNxt.Sub(c.sndUna)
	dataAcked := ack.Sub(c.sndBufSeq)
	if dataAcked > c.sndBuf.length() {
		dataAcked = c.sndBuf.length()
	}
	if dataAcked > 0 {
		c.sndBuf.discard(dataAcked)
		c.sndBuf.rewind()
		c.sndBuf.recycle(&c.s.spare)
		c.sndBufSeq = c.sndBufSeq.Add(dataAcked)
		c.notify(EventWritable)
	}
	// RTT sample, Karn's algorithm (RFC 6298 section 3): only a timed
	// segment that was never retransmitted.
	if c.rttTiming && ack.GreaterThan(c.rttSeq) {
		c.rttSampled(now)
	}
	c.sndUna = ack
	if c.sndNxt.LessThan(ack) {
		c.sndNxt = ack
	}
	c.sb.pruneTo(ack)
	c.retries = 0
	c.rtt.backoff = 0
	if c.inRecovery {
		if ack.GreaterEq(c.recover) {
			// Full acknowledgment: leave recovery (RFC 6582 section
			// 3.2 step 3; RFC 6675 section 5 step (4.3)).
			c.inRecovery = false
			if c.sackOK {
				c.ccs.cwnd = c.ccs.ssthresh
			} else {
				c.ccs.cwnd = minInt(c.ccs.ssthresh, maxInt(c.sndMax.Sub(c.sndUna), c.mss)+c.mss)
			}
			c.cc.onRecoveryEnd(&c.ccs, now)
		} else if !c.sackOK {
			// Partial acknowledgment (RFC 6582 section 3.2 step 4):
			// retransmit the first unacknowledged segment, deflate
			// the window by the amount acked, add back one SMSS.
			c.retransmitFirst(now)
			c.ccs.cwnd -= acked
			if acked >= c.mss {
				c.ccs.cwnd += c.mss
			}
			if c.ccs.cwnd < c.mss {
				c.ccs.cwnd = c.mss
			}
		} else if c.highRxt.LessThan(ack) {
			c.highRxt = ack
		}
	} else if c.cwndLimited(flight) {
		c.cc.onAck(&c.ccs, now, acked, flight)
	}
	c.dupAcks = 0
	// RFC 6298 section 5.2/5.3: stop the timer when all is acked, else
	// restart it.
	if c.sndUna == c.sndMax {
		c.rtoTimer.stop()
	} else {
		c.rtoTimer.arm(now + c.rtt.current())
	}
}

// cwndLimited: grow the window only when it limited the sender (RFC 7661
// section 4.2's idea; Linux tcp_is_cwnd_limited), so an application- or
// receiver-limited flow does not inflate cwnd without bound.
func (snd *sender) cwndLimited(flight int) bool {
	if snd.ccs.cwnd < snd.ccs.ssthresh {
		return 2*flight+2*snd.mss >= snd.ccs.cwnd
	}
	return flight+3*snd.mss >= snd.ccs.cwnd
}

// onDupAck counts duplicate ACKs and starts fast retransmit / fast
// recovery (RFC 5681 section 3.2, RFC 6582, RFC 6675 section 5).
func (c *Conn) onDupAck(now time.Duration) {
	c.dupAcks++
	c.s.stats.DupAcks++
	if c.inRecovery {
		if !c.sackOK {
			// RFC 5681 section 3.2 step 4: inflate by one SMSS.
			c.ccs.cwnd += c.mss
		}
		return
	}
	lost := c.sackOK && c.sb.lostEnd(c.sndUna, c.mss).GreaterThan(c.sndUna)
	if c.dupAcks < 3 && !lost {
		// Limited transmit (RFC 3042): output may send one new
		// segment per duplicate ACK beyond cwnd.
		return
	}
	// RFC 6582 section 3.2 step 2: no new recovery until the ACK
	// covers the previous recovery point.
	if !c.sndUna.GreaterThan(c.recover) {
		return
	}
	c.enterRecovery(now)
}

func (c *Conn) enterRecovery(now time.Duration) {
	s := c.s
	flight := c.sndMax.Sub(c.sndUna)
	c.cc.onLoss(&c.ccs, now, flight)
	c.inRecovery = true
	c.recover = c.sndMax
	s.stats.FastRetransmits++
	if c.sackOK {
		// RFC 6675 section 5 step (4.2): cwnd = ssthresh, and
		// retransmit the first segment (HighRxt follows).
		s.stats.SackRecoveries++
		c.ccs.cwnd = c.ccs.ssthresh
	} else {
		// RFC 5681 section 3.2 step 3: cwnd = ssthresh + 3*SMSS.
		s.stats.RenoRecoveries++
		c.ccs.cwnd = c.ccs.ssthresh + 3*c.mss
	}
	c.highRxt = c.sndUna
	c.retransmitFirst(now)
}

// receive places the segment's data in the receive buffer, in order or
// in the out-of-order assembler, and handles its FIN (RFC 9293 section
// 3.10.7.4 seventh and eighth).
func (c *Conn) receive(now time.Duration, r *Repr) {
	s := c.s
	seq := r.Seq
	data := r.Payload
	fin := r.Flags&FlagFIN != 0
	// Trim what we already have.
	if seq.LessThan(c.rcvNxt) {
		d := c.rcvNxt.Sub(seq)
		if d > len(data) {
			data = nil
			if fin && seq.Add(len(r.Payload)).LessThan(c.rcvNxt) {
				fin = false
			}
		} else {
			data = data[d:]
		}
		seq = c.rcvNxt
	}
	// Trim to the buffer space (the window we offered is within it).
	off := seq.Sub(c.rcvNxt)
	room := c.rcvBuf.free() - off
	if room < 0 {
		room = 0
	}
	// Short of memory, hold what the advertised window obliges us to
	// and no more (docs/tcp.md, "Memory pressure"), and let the buffer
	// grow to that, not to twice its size.
	memTrim := false
	c.rcvBuf.soft = 0
	if s.mem.budget.state() != memNormal {
		oblig := maxInt(c.rcvAdvEdge.Sub(seq), 0)
		if oblig < room {
			room, memTrim = oblig, true
		}
		c.rcvBuf.soft = int32(c.rcvBuf.length() + maxInt(c.rcvAdvEdge.Sub(c.rcvNxt), 0))
	}
	if len(data) > room {
		if memTrim {
			s.stats.Drops.RcvMemDrop++
		} else {
			s.stats.Drops.RecvBufferFull++
		}
		data = data[:room]
		fin = false
	}
	if len(data) == 0 && !fin {
		c.ackNow = true // e.g. a zero-window probe or a duplicate
		return
	}
	s.stats.InDataBytes += uint64(len(data))
	if off > 0 {
		// Out of order (RFC 5681 section 4.2: ACK at once, so the
		// sender sees duplicate ACKs; RFC 2018 SACK blocks follow).
		c.ackNow = true
		if len(data) > 0 {
			if !c.ooo.add(seq, seq.Add(len(data)), c.s.cfg.MaxOOORanges, c.s.nextStamp()) {
				s.stats.OfoDropped++
				s.stats.Drops.OfoLimit++
				return
			}
			s.stats.OfoQueued++
			c.rcvBuf.prime(&s.spare, c.rcvBuf.length()+off+len(data))
			c.rcvBuf.writeAt(c.rcvBuf.length()+off, data)
		}
		if fin {
			c.peerFin = true
			c.peerFinSeq = seq.Add(len(data))
		}
		return
	}
	hadOOO := !c.ooo.empty()
	if len(data) > 0 {
		rest := data
		if direct := c.direct(); direct != nil && !hadOOO && c.rcvBuf.length() == 0 {
			n := direct(rest)
			s.charge(hw.CostCopyByte, n) // the copy Read would have made
			c.rcvNxt = c.rcvNxt.Add(n)
			rest = rest[n:]
		}
		if len(rest) > 0 {
			c.rcvBuf.prime(&s.spare, c.rcvBuf.length()+len(rest))
			c.rcvBuf.writeAt(c.rcvBuf.length(), rest)
			c.rcvBuf.extend(len(rest))
			c.rcvNxt = c.rcvNxt.Add(len(rest))
		}
		for {
			end, ok := c.ooo.popContiguous(c.rcvNxt)
			if !ok {
				break
			}
			c.rcvBuf.extend(end.Sub(c.rcvNxt))
			c.rcvNxt = end
		}
		c.notify(EventReadable)
	}
	if !fin && c.peerFin && c.rcvNxt == c.peerFinSeq {
		fin = true
	}
	if hadOOO {
		// Filling a hole: ACK at once (RFC 5681 section 4.2).
		c.ackNow = true
	} else {
		c.unackedBytes += len(data)
		if !s.cfg.DelayedAck || c.unackedBytes >= 2*c.mss {
			// At least every second full-sized segment (RFC 5681
			// section 4.2, RFC 1122 4.2.3.2).
			c.ackNow = true
		} else if c.rcvOfferEdge().Sub(c.rcvNxt) < int(c.advMSS) {
			// The window is (nearly) closed: the sender can send
			// nothing more, so holding the ACK only delays it (and
			// may trip its RTO). Linux acks at once here too.
			c.ackNow = true
		} else if !c.delackTimer.armed() {
			c.delackTimer.arm(now + s.cfg.DelayedAckTimeout)
		}
	}
	if fin {
		c.onFin(now)
	}
}

// onFin handles the peer's FIN once everything before it has arrived
// (RFC 9293 section 3.10.7.4 eighth).
func (c *Conn) onFin(now time.Duration) {
	c.rcvNxt++
	c.finRcvd = true
	c.peerFin = false
	c.ackNow = true
	switch c.state {
	case StateEstablished:
		c.setState(StateCloseWait)
	case StateFinWait1:
		// Our FIN is not yet acknowledged: simultaneous close.
		c.setState(StateClosing)
	case StateFinWait2:
		c.enterTimeWait(now)
	}
	c.notify(EventReadable | EventHangup)
}

// enterTimeWait starts the 2*MSL wait (RFC 9293 section 3.10.7.4).
func (c *Conn) enterTimeWait(now time.Duration) {
	c.setState(StateTimeWait)
	c.s.stats.TimewaitConns++
	c.closeTimer.arm(now + 2*c.s.cfg.MSL)
	c.rtoTimer.stop()
	c.persistTimer.stop()
	c.keepTimer.stop()
	c.sndBuf.release(&c.s.spare)
	// No data is accepted in TIME-WAIT: an emptied receive buffer is
	// freed too, so that thousands of TIME-WAIT connections hold no
	// buffers (unread bytes stay for the application).
	if c.rcvBuf.length() == 0 {
		c.rcvBuf.release(&c.s.spare)
	}
	c.sb.reset()
	c.inRecovery = false
}
