package tcp

import "time"

// Connect starts an active open from local to remote (RFC 9293 section
// 3.10.1 OPEN, active): it sends a SYN with our options at now and returns
// the connection in SYN-SENT. A zero local port picks an ephemeral port
// (32768-60999, Linux's default range). Completion shows as
// EventWritable; failure as EventError with Err() ErrConnRefused or
// ErrTimeout.
func (s *Stack) Connect(now time.Duration, local, remote Addr) (*Conn, error) {
	if s.full() {
		s.stats.ConnLimitRefused++
		return nil, ErrConnLimit
	}
	id := fourTuple{localAddr: local.IP, remoteAddr: remote.IP, localPort: local.Port, remotePort: remote.Port}
	if id.localPort == 0 {
		found := false
		for i := 0; i < 28232; i++ {
			p := s.nextPort
			s.nextPort++
			if s.nextPort < 32768 || s.nextPort > 60999 {
				s.nextPort = 32768
			}
			id.localPort = p
			if _, used := s.conns.get(id); !used {
				found = true
				break
			}
		}
		if !found {
			return nil, ErrNoPorts
		}
	} else if _, used := s.conns.get(id); used {
		return nil, ErrAddrInUse
	}
	c := s.newConn(id, s.isn(now, id))
	c.setState(StateSynSent)
	s.stats.ActiveOpens++
	c.sendSYN(now, false)
	s.afterConn(now, c)
	return c, nil
}

// synOptions fills the options of our SYN or SYN-ACK: MSS (RFC 9293
// section 3.7.1), window scale (RFC 7323 section 2), SACK-permitted
// (RFC 2018 section 2) and timestamps (RFC 7323 section 3). On a SYN-ACK
// only what the peer offered is echoed.
func (c *Conn) synOptions(o *Repr, now time.Duration, synAck bool) {
	cfg := &c.s.cfg
	o.MSS = c.advMSS
	if (!synAck && cfg.WindowScaling) || (synAck && c.wsOK) {
		o.HasWScale = true
		o.WScale = c.rcvWscale
	}
	if (!synAck && cfg.SACK) || (synAck && c.sackOK) {
		o.SACKPermitted = true
	}
	if (!synAck && cfg.Timestamps) || (synAck && c.tsOK) {
		o.HasTS = true
		o.TSVal = c.tsNow(now)
		o.TSEcr = c.tsRecent
	}
}

// sendSYN (re)sends our SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED) and arms
// the retransmission timer (RFC 6298 section 2.1: initial RTO 1 s).
func (c *Conn) sendSYN(now time.Duration, retransmit bool) {
	var o Repr
	o.SrcPort, o.DstPort = c.id.localPort, c.id.remotePort
	o.Seq = c.iss
	o.Flags = FlagSYN
	synAck := c.state == StateSynReceived
	if synAck {
		o.Flags |= FlagACK
		o.Ack = c.rcvNxt
	}
	c.synOptions(&o, now, synAck)
	// The window of a SYN is never scaled (RFC 7323 section 2.2).
	o.Window = uint16(minInt(minInt(c.rcvBuf.free(), c.rcvWindowMax()), 0xffff))
	c.rcvAdvEdge = c.rcvNxt.Add(int(o.Window))
	c.syncRcvPromise()
	if retransmit {
		c.s.stats.RetransSegs++
	} else {
		c.rttTiming = true
		c.rttSeq = c.iss
		c.rttStart = now
	}
	c.sndNxt = c.iss + 1
	c.sndMax = seqMax(c.sndMax, c.sndNxt)
	c.lastAckSent = c.rcvNxt
	c.s.send(now, c.id, &o, nil, 0, 0)
	c.rtoTimer.arm(now + c.rtt.current())
}

// negotiate applies the options of the peer's SYN (RFC 9293 section
// 3.7.1: 536 when MSS is absent; RFC 7323 sections 2.2 and 3.2: scaling
// and timestamps only if both sides offered them; RFC 2018 section 2).
func (c *Conn) negotiate(r *Repr, now time.Duration) {
	cfg := &c.s.cfg
	peerMSS := 536
	if r.MSS != 0 {
		peerMSS = int(r.MSS)
	}
	mss := minInt(peerMSS, int(c.advMSS))
	if p := c.s.pathMSS(now, c.id.remoteAddr); p > 0 {
		// A path MTU already lowered (RFC 9293 section 3.7.1: MMS_S).
		mss = minInt(mss, p)
	}
	c.wsOK = cfg.WindowScaling && r.HasWScale
	if c.wsOK {
		c.sndWscale = r.WScale
		if c.sndWscale > 14 {
			c.sndWscale = 14 // RFC 7323 section 2.3
		}
	} else {
		c.sndWscale, c.rcvWscale = 0, 0
	}
	c.sackOK = cfg.SACK && r.SACKPermitted
	c.tsOK = cfg.Timestamps && r.HasTS
	if c.tsOK {
		c.tsRecent = r.TSVal
		c.tsRecentAt = now
		// RFC 6691: the MSS excludes options; leave room for the
		// timestamps option carried in every segment.
		mss -= 12
	}
	if mss < 64 {
		mss = 64
	}
	c.mss = mss
	c.ccs.mss = mss
	c.cc.init(&c.ccs, c.s.cfg.InitialWindow)
}

// inputSynSent handles a segment in SYN-SENT (RFC 9293 section 3.10.7.3).
func (c *Conn) inputSynSent(now time.Duration, r *Repr) {
	s := c.s
	// First, check the ACK.
	if r.Flags&FlagACK != 0 {
		if r.Ack.LessEq(c.iss) || r.Ack.GreaterThan(c.sndMax) {
			s.stats.Drops.BadAck++
			if r.Flags&FlagRST == 0 {
				s.replyRST(now, c.id, r)
			}
			return
		}
	}
	// Second, the RST: only with an acceptable ACK (RFC 5961 section 3.2
	// leaves SYN-SENT to this check).
	if r.Flags&FlagRST != 0 {
		s.stats.InRsts++
		if r.Flags&FlagACK != 0 {
			s.stats.AttemptFails++
			c.end(now, endReset)
		} else {
			s.stats.Drops.RstInvalid++
		}
		return
	}
	if r.Flags&FlagSYN == 0 {
		s.stats.Drops.SynInvalid++
		return
	}
	// Fourth, the SYN.
	c.irs = r.Seq
	c.rcvNxt = r.Seq + 1
	c.negotiate(r, now)
	if r.Flags&FlagACK != 0 {
		c.sndUna = r.Ack
		if c.rttTiming {
			c.rttSampled(now)
		}
		c.handshakeDone()
		c.establish(now, r)
		c.ackNow = true
		return
	}
	// Simultaneous open (RFC 9293 section 3.5, figure 8): SYN-RECEIVED,
	// send SYN-ACK with our original ISS.
	c.rttTiming = false
	c.setState(StateSynReceived)
	c.sendSYN(now, true)
}

// establish enters ESTABLISHED (or FIN-WAIT-1 when a close was queued)
// and takes the peer's window from the segment that completed the
// handshake. The window of a SYN is not scaled (RFC 7323 section 2.2);
// that of the ACK completing a passive open is.
func (c *Conn) establish(now time.Duration, r *Repr) {
	wnd := int(r.Window)
	if r.Flags&FlagSYN == 0 {
		wnd <<= c.sndWscale
	}
	c.sndWnd = wnd
	c.maxSndWnd = wnd
	c.sndWl1 = r.Seq
	c.sndWl2 = r.Ack
	// RFC 6582 section 3.2: recover starts at the initial send sequence.
	c.recover = c.iss
	c.highRxt = c.sndUna
	if c.sndNxt.LessThan(c.sndUna) {
		c.sndNxt = c.sndUna
	}
	if c.finQueued {
		c.setState(StateFinWait1)
	} else {
		c.setState(StateEstablished)
	}
	c.keepProbes = 0
	c.keepTimer.stop()
	c.notify(EventWritable)
}

// handshakeDone resets retransmission state once the handshake
// completes. RFC 6298 section 5.7: if the SYN (or SYN-ACK) had to be
// retransmitted and so no RTT sample exists, data transmission starts
// with an RTO of 3 seconds; the SYN's backoff does not carry over.
func (c *Conn) handshakeDone() {
	c.sender.handshakeDone()
	c.rtoTimer.stop()
}

func (snd *sender) handshakeDone() {
	if snd.retries > 0 && !snd.rtt.hasSample {
		snd.rtt.rto = clampDur(3*time.Second, snd.rtt.bounds.min, snd.rtt.bounds.max)
	}
	snd.rtt.backoff = 0
	snd.retries = 0
}
