package tcp

import "time"

// tsNow is our timestamp clock (RFC 7323 section 5.4) with a
// per-connection offset (RFC 7323 section 5.4, RFC 6528-style secret).
func (c *Conn) tsNow(now time.Duration) uint32 {
	return uint32(now/c.s.cfg.TimestampTick) + c.tsOffset
}

// canSendData: states in which data or a FIN may be (re)transmitted.
func (c *Conn) canSendData() bool {
	switch c.state {
	case StateEstablished, StateCloseWait, StateFinWait1, StateClosing, StateLastAck:
		return true
	}
	return false
}

// output sends what the windows allow, then a pure ACK if one is still
// owed, then arms the persist and keep-alive timers.
func (c *Conn) output(now time.Duration) {
	switch c.state {
	case StateClosed, StateListen, StateSynSent:
		return
	case StateSynReceived, StateTimeWait, StateFinWait2:
		if c.ackNow {
			c.sendAck(now)
		}
		c.armTimers(now)
		return
	}
	if c.inRecovery && c.sackOK {
		c.sackRecoverySend(now)
	} else {
		extra := 0
		if !c.inRecovery && c.dupAcks > 0 && c.dupAcks < 3 {
			// Limited transmit (RFC 3042 section 2): up to cwnd + 2
			// SMSS outstanding on the first two duplicate ACKs.
			extra = c.dupAcks * c.mss
		}
		for c.sendNew(now, c.ccs.cwnd+extra-c.sndNxt.Sub(c.sndUna)) > 0 {
		}
	}
	if c.ackNow {
		c.sendAck(now)
	}
	c.armTimers(now)
}

// sendNew sends at most one segment at SND.NXT within cwndAvail bytes of
// congestion window and the peer's window, applying sender-side silly
// window avoidance and Nagle. It returns the sequence space consumed.
func (c *Conn) sendNew(now time.Duration, cwndAvail int) int {
	bufEnd := c.sndBufSeq.Add(c.sndBuf.length())
	avail := bufEnd.Sub(c.sndNxt)
	if avail < 0 {
		avail = 0
	}
	finPending := c.finQueued && c.sndNxt.LessEq(bufEnd)
	if avail == 0 && !finPending {
		return 0
	}
	wndAvail := c.sndUna.Add(c.sndWnd).Sub(c.sndNxt)
	usable := minInt(cwndAvail, wndAvail)
	if usable < 0 {
		usable = 0
	}
	segMax := c.segPayloadMax()
	n := minInt(minInt(avail, segMax), usable)
	fin := finPending && n == avail
	if n == 0 && (!fin || cwndAvail <= 0) {
		return 0
	}
	if n < segMax && !fin {
		idle := c.sndNxt == c.sndUna
		if n < avail {
			// Window-limited: sender SWS avoidance (RFC 9293 section
			// 3.8.6.2.1) waits for at least half the largest window
			// seen, unless nothing is in flight.
			if n < c.maxSndWnd/2 && !idle {
				return 0
			}
		} else if !c.noDelay && !idle {
			// Nagle (RFC 896, RFC 1122 4.2.3.4): one small segment
			// outstanding at a time.
			return 0
		}
	}
	seq := c.sndNxt
	c.sendData(now, seq, n, fin, seq.LessThan(c.sndMax))
	if fin {
		return n + 1
	}
	return n
}

// sendData emits n bytes at seq (and a FIN after them if fin), with the
// ACK fields, and advances SND.NXT when seq is SND.NXT.
func (c *Conn) sendData(now time.Duration, seq Seq, n int, fin, retransmit bool) {
	s := c.s
	var o Repr
	o.SrcPort, o.DstPort = c.id.localPort, c.id.remotePort
	o.Seq = seq
	end := seq.Add(n)
	if end == c.sndBufSeq.Add(c.sndBuf.length()) && n > 0 {
		o.Flags |= FlagPSH
	}
	if fin {
		o.Flags |= FlagFIN
		end++
	}
	c.fillAck(&o, now)
	s.send(now, c.id, &o, &c.sndBuf, seq.Sub(c.sndBufSeq), n)
	if retransmit {
		s.stats.RetransSegs++
		c.rttTiming = false // Karn (RFC 6298 section 3)
	} else {
		s.stats.OutDataBytes += uint64(n)
		if !c.rttTiming && c.retries == 0 {
			c.rttTiming = true
			c.rttSeq = seq
			c.rttStart = now
		}
	}
	if seq == c.sndNxt {
		c.sndNxt = end
	}
	c.sndMax = seqMax(c.sndMax, end)
	// RFC 6298 section 5.1: start the timer if it is not running.
	if !c.rtoTimer.armed() {
		c.rtoTimer.arm(now + c.rtt.current())
	}
}

// segPayloadMax is the data that fits in one segment now: the MSS (less
// timestamps) less the SACK option this segment will carry, so the IP
// packet stays within the MTU (RFC 6691: options come out of the data).
func (c *Conn) segPayloadMax() int {
	m := c.mss
	if c.sackOK && !c.ooo.empty() {
		k := len(c.ooo.r)
		max := MaxSACKBlocks
		if c.tsOK {
			max = 3
		}
		if k > max {
			k = max
		}
		m -= 4 + 8*k
	}
	return m
}

// rttSampled takes the RTT sample of the timed segment an ACK covers
// (RFC 6298 section 2; Karn's algorithm, section 3, keeps retransmitted
// segments untimed) and passes SRTT on to congestion control.
func (snd *sender) rttSampled(now time.Duration) {
	snd.rtt.sample(now - snd.rttStart)
	snd.ccs.srtt = snd.rtt.srtt
	snd.rttTiming = false
}

// retransmitFirst resends the first unacknowledged segment (fast
// retransmit, RFC 5681 section 3.2 step 3; NewReno partial ACK).
func (c *Conn) retransmitFirst(now time.Duration) {
	bufEnd := c.sndBufSeq.Add(c.sndBuf.length())
	n := minInt(bufEnd.Sub(c.sndUna), c.segPayloadMax())
	if n < 0 {
		n = 0
	}
	if hs, he := c.sb.nextHole(c.sndUna, c.sndMax); hs == c.sndUna && he.Sub(hs) < n {
		n = he.Sub(hs)
	}
	fin := c.finQueued && c.sndUna.Add(n) == bufEnd && c.sndMax.GreaterThan(bufEnd)
	if n == 0 && !fin {
		return
	}
	c.sendData(now, c.sndUna, n, fin, true)
	end := c.sndUna.Add(n)
	if fin {
		end++
	}
	if c.highRxt.LessThan(end) {
		c.highRxt = end
	}
	c.rtoTimer.arm(now + c.rtt.current())
}

// pipe is RFC 6675 section 4's estimate of octets in flight, computed
// from the scoreboard in ranges rather than per octet: unSACKed octets
// above the loss boundary, plus retransmitted unSACKed octets below it.
func (snd *sender) pipe(lostEnd Seq) int {
	p := 0
	if lostEnd.LessThan(snd.sndMax) {
		p = snd.sndMax.Sub(lostEnd) - snd.sb.sackedIn(lostEnd, snd.sndMax)
	}
	rx := seqMin(snd.highRxt, lostEnd)
	if snd.sndUna.LessThan(rx) {
		p += rx.Sub(snd.sndUna) - snd.sb.sackedIn(snd.sndUna, rx)
	}
	return p
}

// sackRecoverySend is RFC 6675 section 5 step (C): while cwnd - pipe >=
// 1 SMSS, send NextSeg(): first lost holes above HighRxt (rule 1), then
// new data (rule 2). Rule 3 (retransmitting unSACKed but not-yet-lost
// data) is not used.
func (c *Conn) sackRecoverySend(now time.Duration) {
	lostEnd := c.sb.lostEnd(c.sndUna, c.mss)
	pipe := c.pipe(lostEnd)
	bufEnd := c.sndBufSeq.Add(c.sndBuf.length())
	for c.ccs.cwnd-pipe >= c.mss {
		from := seqMax(c.highRxt, c.sndUna)
		if from.LessThan(lostEnd) {
			hs, he := c.sb.nextHole(from, lostEnd)
			if hs.LessThan(lostEnd) {
				n := minInt(he.Sub(hs), c.segPayloadMax())
				if d := bufEnd.Sub(hs); n > d {
					n = maxInt(d, 0)
				}
				fin := c.finQueued && hs.Add(n) == bufEnd && c.sndMax.GreaterThan(bufEnd)
				if n == 0 && !fin {
					break
				}
				c.sendData(now, hs, n, fin, true)
				end := hs.Add(n)
				if fin {
					end++
				}
				c.highRxt = end
				pipe += end.Sub(hs)
				continue
			}
		}
		k := c.sendNew(now, c.ccs.cwnd-pipe)
		if k == 0 {
			break
		}
		pipe += k
	}
}

// advertiseWindow returns the window field to send (RFC 9293 section
// 3.8.6.2.2, RFC 7323 section 2.3): the free receive buffer as the
// memory budget allows it (rcvOfferEdge), never
// moving the right edge left, and moving it right only by at least
// min(RecvBuffer/2, MSS) (receiver silly window avoidance).
func (c *Conn) advertiseWindow() uint16 {
	edge := c.rcvOfferEdge()
	thr := minInt(c.s.cfg.RecvBuffer/2, int(c.advMSS))
	if edge.Sub(c.rcvAdvEdge) < thr {
		edge = seqMax(c.rcvAdvEdge, c.rcvNxt)
	}
	wnd := edge.Sub(c.rcvNxt)
	scaled := wnd >> c.rcvWscale
	if scaled > 0xffff {
		scaled = 0xffff
	}
	if e := c.rcvNxt.Add(scaled << c.rcvWscale); e.GreaterThan(c.rcvAdvEdge) {
		c.rcvAdvEdge = e
		c.syncRcvPromise()
	}
	return uint16(scaled)
}

// fillAck sets ACK, window, timestamps and SACK blocks of an outgoing
// segment; every such segment acknowledges, so the delayed ACK is done.
func (c *Conn) fillAck(o *Repr, now time.Duration) {
	o.Flags |= FlagACK
	o.Ack = c.rcvNxt
	o.Window = c.advertiseWindow()
	if c.tsOK {
		o.HasTS = true
		o.TSVal = c.tsNow(now)
		o.TSEcr = c.tsRecent
	}
	if c.sackOK && !c.ooo.empty() {
		max := MaxSACKBlocks
		if c.tsOK {
			max = 3
		}
		o.NumSACK = c.ooo.sackBlocks(o.SACK[:max])
	}
	c.lastAckSent = c.rcvNxt
	c.ackNow = false
	c.delackTimer.stop()
	c.unackedBytes = 0
}

// sendAck sends a segment with no data: <SEQ=SND.MAX><ACK=RCV.NXT><CTL=ACK>,
// with the window, timestamps and SACK blocks fillAck adds.
func (c *Conn) sendAck(now time.Duration) {
	var o Repr
	o.SrcPort, o.DstPort = c.id.localPort, c.id.remotePort
	// A pure ACK carries SND.MAX, not SND.NXT: after a retransmission
	// timeout rewinds SND.NXT to SND.UNA, a sequence number below what the
	// peer has received is out of its window and the ACK's information
	// would be dropped (RFC 9293 section 3.10.7.4); two peers that both
	// rewound would trade unacceptable ACKs for ever. BSD's tcp_output
	// does the same.
	o.Seq = c.sndMax
	c.fillAck(&o, now)
	c.s.send(now, c.id, &o, nil, 0, 0)
}
