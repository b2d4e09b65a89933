package tcp

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// nextDeadline is the earliest armed timer of c, 0 if none.
func (c *Conn) nextDeadline() time.Duration {
	d := time.Duration(0)
	for _, t := range [...]time.Duration{c.rtoAt, c.delackAt, c.persistAt, c.keepAt, c.closeAt} {
		if t != 0 && (d == 0 || t < d) {
			d = t
		}
	}
	return d
}

// armTimers arms the timers that depend on state rather than on an
// event: persist (RFC 9293 section 3.8.6.1), keep-alive (RFC 1122
// 4.2.3.6) and the orphaned FIN-WAIT-2 timeout.
func (c *Conn) armTimers(now time.Duration) {
	cfg := &c.s.cfg
	if c.canSendData() && c.sndWnd == 0 && c.persistAt == 0 && c.rtoAt == 0 &&
		c.sndNxt == c.sndUna && c.sndBufSeq.Add(c.sndBuf.length()).GreaterThan(c.sndNxt) {
		c.persistAt = now + c.persistInterval()
	}
	if c.keepAlive && c.keepAt == 0 && (c.state == StateEstablished || c.state == StateCloseWait) {
		if c.lastRcvAt == 0 {
			c.lastRcvAt = now
		}
		c.keepAt = c.lastRcvAt + c.keepIdle
	}
	if !c.keepAlive {
		c.keepAt = 0
	}
	if c.state == StateFinWait2 && c.orphan && c.closeAt == 0 {
		c.closeAt = now + cfg.FinWait2Timeout
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

// onTimers runs every timer of c that is due.
func (c *Conn) onTimers(now time.Duration) {
	s := c.s
	if c.closeAt != 0 && now >= c.closeAt {
		// End of TIME-WAIT (2*MSL) or of an orphaned FIN-WAIT-2.
		s.charge(hw.CostStackTimer, 1)
		s.removeConn(c)
		c.notify(EventHangup)
		return
	}
	if c.rtoAt != 0 && now >= c.rtoAt {
		s.charge(hw.CostStackTimer, 1)
		c.rtoAt = 0
		c.onRTO(now)
		if c.state == StateClosed {
			return
		}
	}
	if c.persistAt != 0 && now >= c.persistAt {
		s.charge(hw.CostStackTimer, 1)
		c.persistAt = 0
		c.onPersist(now)
	}
	if c.keepAt != 0 && now >= c.keepAt {
		s.charge(hw.CostStackTimer, 1)
		c.keepAt = 0
		c.onKeepalive(now)
		if c.state == StateClosed {
			return
		}
	}
	if c.delackAt != 0 && now >= c.delackAt {
		s.charge(hw.CostStackTimer, 1)
		c.delackAt = 0
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
			c.fail(ErrTimeout)
			return
		}
		c.rtt.expired()
		c.rttTiming = false
		c.sendSYN(now, true)
		return
	case StateSynReceived:
		c.retries++
		if c.retries > s.cfg.SynAckRetries {
			s.stats.ListenDrops++
			if c.listener == nil {
				s.stats.AttemptFails++
				c.fail(ErrTimeout)
				return
			}
			s.removeConn(c)
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
		c.fail(ErrTimeout)
		return
	}
	flight := c.sndMax.Sub(c.sndUna)
	c.cc.onRTO(&c.ccs, now, flight)
	c.inRecovery = false
	c.recover = c.sndMax // RFC 6582 section 3.2 step 1 after a timeout
	c.dupAcks = 0
	c.sb.reset()
	c.highRxt = c.sndUna
	c.sndNxt = c.sndUna
	c.rtt.expired()
	c.rttTiming = false
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
	c.persistAt = now + c.persistInterval()
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
	if c.keepProbes == 0 && now-c.lastRcvAt < c.keepIdle {
		c.keepAt = c.lastRcvAt + c.keepIdle
		return
	}
	if c.sndMax != c.sndUna || c.sndBuf.length() > 0 {
		// Data in flight: the retransmission timer watches the peer.
		c.keepAt = now + c.keepIdle
		return
	}
	if c.keepProbes >= c.keepCount {
		s.stats.KeepaliveTimeouts++
		s.stats.EstabResets++
		c.sendRST(now)
		c.fail(ErrTimeout)
		return
	}
	var o Repr
	o.SrcPort, o.DstPort = c.id.localPort, c.id.remotePort
	o.Seq = c.sndUna - 1
	c.fillAck(&o, now)
	s.send(now, c.id, &o, nil, 0, 0)
	c.keepProbes++
	s.stats.KeepaliveProbes++
	c.keepAt = now + c.keepIntvl
}
