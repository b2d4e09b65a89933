package tcp

import (
	"github.com/savanna-sim/savanna/stack/stackcost"
	"time"
)

// timer is one deadline of a connection, in one word: the deadline plus
// one, so that its zero value is stopped with no time that means "off"
// (the engine's times start at 0, and a deadline at 0 is a deadline). A
// million connections each keep five of them.
type timer struct {
	at1 time.Duration
}

// arm sets the deadline to at, armed or not before.
func (t *timer) arm(at time.Duration) { t.at1 = at + 1 }

// stop disarms the timer.
func (t *timer) stop() { t.at1 = 0 }

// armed reports whether the timer is armed.
func (t *timer) armed() bool { return t.at1 != 0 }

// deadline is the armed timer's deadline.
func (t *timer) deadline() time.Duration { return t.at1 - 1 }

// due reports whether the timer is armed and its deadline has come.
func (t *timer) due(now time.Duration) bool { return t.at1 != 0 && now >= t.at1-1 }

// connTimers are every deadline of a connection (its place in the
// stack's timer heap is Conn.heapIdx).
type connTimers struct {
	// rtoTimer is the retransmission timer (RFC 6298), also of the SYN
	// and SYN-ACK; delackTimer the delayed ACK (RFC 1122 4.2.3.2);
	// persistTimer the zero-window probe (RFC 9293 section 3.8.6.1);
	// keepTimer keep-alive (RFC 1122 4.2.3.6); closeTimer the end of
	// TIME-WAIT (2*MSL) or of an orphaned FIN-WAIT-2.
	rtoTimer, delackTimer, persistTimer, keepTimer, closeTimer timer
}

// nextDeadline is the earliest armed deadline, and false when none is armed.
func (t *connTimers) nextDeadline() (time.Duration, bool) {
	var d timer
	for _, x := range [...]timer{t.rtoTimer, t.delackTimer, t.persistTimer, t.keepTimer, t.closeTimer} {
		if x.armed() && (!d.armed() || x.at1 < d.at1) {
			d = x
		}
	}
	if !d.armed() {
		return 0, false
	}
	return d.deadline(), true
}

// stopAll disarms every deadline: an ended connection has none.
func (t *connTimers) stopAll() {
	t.rtoTimer, t.delackTimer, t.persistTimer, t.keepTimer, t.closeTimer = timer{}, timer{}, timer{}, timer{}, timer{}
}

// armTimers arms the timers that depend on state rather than on an
// event: persist (RFC 9293 section 3.8.6.1), keep-alive (RFC 1122
// 4.2.3.6) and the orphaned FIN-WAIT-2 timeout.
func (c *Conn) armTimers(now time.Duration) {
	cfg := &c.s.cfg
	if c.canSendData() && c.sndWnd == 0 && !c.persistTimer.armed() && !c.rtoTimer.armed() &&
		c.sndNxt == c.sndUna && c.sndBufSeq.Add(c.sndBuf.length()).GreaterThan(c.sndNxt) {
		c.persistTimer.arm(now + c.persistInterval())
	}
	if c.keepAlive && !c.keepTimer.armed() && (c.state == StateEstablished || c.state == StateCloseWait) {
		if c.lastRcvAt == 0 {
			c.lastRcvAt = now
		}
		c.keepTimer.arm(c.lastRcvAt + c.keepIdle())
	}
	if !c.keepAlive {
		c.keepTimer.stop()
	}
	if c.state == StateFinWait2 && c.orphan && !c.closeTimer.armed() {
		c.closeTimer.arm(now + cfg.FinWait2Timeout)
	}
}

// persistInterval is the RTO backed off per unanswered probe, capped at
// MaxRTO (Linux's tcp_probe0 timing).
func (c *Conn) persistInterval() time.Duration {
	d := c.rtt.current()
	for i := 0; i < c.persistBackoff && d < c.s.cfg.MaxRTO; i++ {
		d *= 2
	}
	return clampDur(d, c.s.cfg.MinRTO, c.s.cfg.MaxRTO)
}

// onTimers runs every timer of c that is due. A timer that ends the
// connection stops the others with it (Conn.end), so the ones after it
// find nothing due.
func (c *Conn) onTimers(now time.Duration) {
	s := c.s
	if c.closeTimer.due(now) {
		// End of TIME-WAIT (2*MSL) or of an orphaned FIN-WAIT-2.
		s.charge(stackcost.Timer, 1)
		c.end(now, endExpired)
		return
	}
	if c.rtoTimer.due(now) {
		s.charge(stackcost.Timer, 1)
		c.rtoTimer.stop()
		c.onRTO(now)
	}
	if c.persistTimer.due(now) {
		s.charge(stackcost.Timer, 1)
		c.persistTimer.stop()
		c.onPersist(now)
	}
	if c.keepTimer.due(now) {
		s.charge(stackcost.Timer, 1)
		c.keepTimer.stop()
		c.onKeepalive(now)
	}
	if c.delackTimer.due(now) {
		s.charge(stackcost.Timer, 1)
		c.delackTimer.stop()
		if c.state.synchronized() {
			c.ackNow = true
			s.stats.DelayedAcks++
		}
	}
	c.output(now)
}

// onRTO handles retransmission timeout: SYN and SYN-ACK retransmission
// with backoff and give-up (RFC 6298 section 5, RFC 1122 4.2.3.5), and
// for data RFC 5681 section 3.1 / RFC 6298 section 5.4-5.6: back off,
// collapse cwnd, retransmit from SND.UNA (go-back-N; the receiver drops
// duplicates).
func (c *Conn) onRTO(now time.Duration) {
	s := c.s
	s.stats.RtoTimeouts++
	switch c.state {
	case StateSynSent:
		c.retries++
		if c.retries > s.cfg.SynRetries {
			s.stats.AttemptFails++
			c.end(now, endTimeout)
			return
		}
		c.rtt.expired()
		c.rttTiming = false
		c.sendSYN(now, true)
		return
	case StateSynReceived:
		c.retries++
		if c.retries > s.cfg.SynAckRetries {
			// A listener's half-open connection given up on is one of
			// Linux's ListenDrops; a simultaneous open (no listener) is
			// an active open that failed.
			if c.listener == nil {
				s.stats.AttemptFails++
			} else {
				s.stats.ListenDrops++
			}
			c.end(now, endTimeout)
			return
		}
		c.rtt.expired()
		c.rttTiming = false
		c.sendSYN(now, true)
		return
	}
	if !c.canSendData() || c.sndUna == c.sndMax {
		return
	}
	c.retries++
	if c.retries > s.cfg.MaxRetries {
		s.stats.RetransTimeouts++
		if c.state.countsAsEstab() {
			s.stats.EstabResets++
		}
		c.end(now, endTimeout)
		return
	}
	c.goBackN(now)
}

// goBackN is the sender's response to a retransmission timeout of data
// (RFC 5681 section 3.1, RFC 6298 section 5.5): congestion control
// collapses the window, recovery and the scoreboard restart, SND.NXT goes
// back to SND.UNA and the timer backs off.
func (snd *sender) goBackN(now time.Duration) {
	flight := snd.sndMax.Sub(snd.sndUna)
	snd.cc.onRTO(&snd.ccs, now, flight)
	snd.inRecovery = false
	snd.recover = snd.sndMax // RFC 6582 section 3.2 step 1 after a timeout
	snd.dupAcks = 0
	snd.sb.reset()
	snd.highRxt = snd.sndUna
	snd.sndNxt = snd.sndUna
	snd.rtt.expired()
	snd.rttTiming = false
}

// onPersist sends a zero-window probe: one octet beyond the closed
// window (RFC 9293 section 3.8.6.1, RFC 1122 4.2.2.17). SND.NXT does not
// move; SND.MAX covers the octet so the ACK that accepts it is valid.
func (c *Conn) onPersist(now time.Duration) {
	s := c.s
	if !c.canSendData() || c.sndWnd > 0 {
		return
	}
	bufEnd := c.sndBufSeq.Add(c.sndBuf.length())
	if !bufEnd.GreaterThan(c.sndNxt) {
		return
	}
	var o Repr
	o.SrcPort, o.DstPort = c.id.localPort, c.id.remotePort
	o.Seq = c.sndNxt
	c.fillAck(&o, now)
	s.send(now, c.id, &o, &c.sndBuf, c.sndNxt.Sub(c.sndBufSeq), 1)
	c.sndMax = seqMax(c.sndMax, c.sndNxt+1)
	s.stats.ZeroWindowProbes++
	c.persistBackoff++
	c.persistTimer.arm(now + c.persistInterval())
}

// onKeepalive sends a keep-alive probe after the idle time, then every
// interval, and gives up after count unanswered probes (RFC 1122
// 4.2.3.6). The probe is <SEQ=SND.UNA-1><ACK=RCV.NXT>, which the peer
// must answer with an ACK because it is out of window.
func (c *Conn) onKeepalive(now time.Duration) {
	s := c.s
	if !c.keepAlive || !(c.state == StateEstablished || c.state == StateCloseWait) {
		return
	}
	if c.keepProbes == 0 && now-c.lastRcvAt < c.keepIdle() {
		c.keepTimer.arm(c.lastRcvAt + c.keepIdle())
		return
	}
	if c.sndMax != c.sndUna || c.sndBuf.length() > 0 {
		// Data in flight: the retransmission timer watches the peer.
		c.keepTimer.arm(now + c.keepIdle())
		return
	}
	if int(c.keepProbes) >= c.keepCount() {
		s.stats.KeepaliveTimeouts++
		s.stats.EstabResets++
		c.end(now, endKeepaliveTimeout)
		return
	}
	var o Repr
	o.SrcPort, o.DstPort = c.id.localPort, c.id.remotePort
	o.Seq = c.sndUna - 1
	c.fillAck(&o, now)
	s.send(now, c.id, &o, nil, 0, 0)
	c.keepProbes++
	s.stats.KeepaliveProbes++
	c.keepTimer.arm(now + c.keepIntvl())
}
