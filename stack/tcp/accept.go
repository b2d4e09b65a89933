package tcp

import (
	"fmt"
	"time"
)

// Listener is a socket in LISTEN (RFC 9293 section 3.10.1, passive OPEN).
// It owns a SYN queue of half-open connections (SYN-RECEIVED) bounded by
// Config.SynBacklog and an accept queue of established connections
// bounded by the backlog, as Linux splits them.
type Listener struct {
	s       *Stack
	key     listenKey
	backlog int
	synQ    int
	acceptQ []*Conn
	cc      string
	closed  bool
	// cookieAt is when the last cookie was sent: ACKs are only checked as
	// cookies shortly after an overflow (Linux's
	// tcp_synq_no_recent_overflow), so stray ACKs get a plain RST.
	cookieAt   time.Duration
	sentCookie bool

	evPending EventMask
	evQueued  bool
	// set is the EventSet the listener reports to (nil: the stack's
	// ready list), with the application's data for its events.
	set     *EventSet
	setData any
	// v6only: an IPv6 listener takes IPv6 segments only (IPV6_V6ONLY;
	// see SetV6Only).
	v6only bool
}

// Listen opens a listener on addr:port with an accept queue of backlog
// connections. An unspecified addr (0.0.0.0, the zero IP, or ::)
// matches every local address of its family.
func (s *Stack) Listen(addr IP, port uint16, backlog int) (*Listener, error) {
	if port == 0 {
		return nil, fmt.Errorf("tcp: listen on %v: port 0: %w", addr, ErrInvalidState)
	}
	k := listenKey{addr, port}
	if _, ok := s.listeners[k]; ok {
		return nil, fmt.Errorf("tcp: listen on %v: %w", Addr{addr, port}, ErrAddrInUse)
	}
	if backlog <= 0 {
		backlog = 128
	}
	l := &Listener{s: s, key: k, backlog: backlog}
	s.listeners[k] = l
	return l, nil
}

// Addr returns the listening address.
func (l *Listener) Addr() Addr { return Addr{l.key.addr, l.key.port} }

// SetCongestionControl selects the controller of connections accepted
// from now on ("newreno" or "cubic").
func (l *Listener) SetCongestionControl(name string) error {
	if _, err := newCC(name); err != nil {
		return err
	}
	l.cc = name
	return nil
}

// Accept returns the oldest established connection, if any.
func (l *Listener) Accept() (*Conn, bool) {
	for len(l.acceptQ) > 0 {
		c := l.acceptQ[0]
		copy(l.acceptQ, l.acceptQ[1:])
		l.acceptQ[len(l.acceptQ)-1] = nil
		l.acceptQ = l.acceptQ[:len(l.acceptQ)-1]
		c.inAcceptQ = false
		c.listener = nil
		return c, true
	}
	return nil, false
}

// Pending returns the number of connections waiting in the accept queue.
func (l *Listener) Pending() int { return len(l.acceptQ) }

// Close stops listening; queued and half-open connections are reset.
func (l *Listener) Close() {
	if l.closed {
		return
	}
	l.closed = true
	delete(l.s.listeners, l.key)
	for _, c := range l.acceptQ {
		c.listener = nil
		c.inAcceptQ = false
		c.Abort()
	}
	l.acceptQ = nil
}

// forget drops c from the listener's queues when it ends before Accept
// (applyEnd); inSynQ tells whether it ended half-open.
func (l *Listener) forget(c *Conn, inSynQ bool) {
	if inSynQ {
		l.synQ--
	}
	if c.inAcceptQ {
		for i, q := range l.acceptQ {
			if q == c {
				copy(l.acceptQ[i:], l.acceptQ[i+1:])
				l.acceptQ[len(l.acceptQ)-1] = nil
				l.acceptQ = l.acceptQ[:len(l.acceptQ)-1]
				break
			}
		}
		c.inAcceptQ = false
	}
	c.listener = nil
}

// established moves a half-open connection to the accept queue. The
// caller has checked that l is still open (a closed listener's
// connection ends instead, through Conn.end).
func (l *Listener) established(c *Conn) {
	l.synQ--
	c.inAcceptQ = true
	l.acceptQ = append(l.acceptQ, c)
	l.notify(EventAcceptable)
}

// input handles a segment for a listener (RFC 9293 section 3.10.7.2).
func (l *Listener) input(now time.Duration, id fourTuple, r *Repr) {
	s := l.s
	switch {
	case r.Flags&FlagRST != 0:
		// An incoming RST is ignored.
		s.stats.InRsts++
		s.stats.Drops.RstInvalid++
		return
	case r.Flags&FlagACK != 0:
		if r.Flags&FlagSYN == 0 && l.sentCookie && now-l.cookieAt <= cookieMaxAge*cookieTick {
			if l.cookieACK(now, id, r) {
				return
			}
		}
		// Any acknowledgment is bad in LISTEN: <SEQ=SEG.ACK><CTL=RST>.
		s.stats.Drops.NoSocket++
		s.replyRST(now, id, r)
		return
	case r.Flags&FlagSYN == 0:
		s.stats.Drops.SynInvalid++
		return
	}
	if s.full() {
		// Past the connection limit: refused where the client sees it
		// (conn_limit_action rst, as Linux answers a SYN no socket
		// takes), or dropped as Gazelle does.
		s.stats.ConnLimitRefused++
		if s.cfg.ConnLimitAction == ConnLimitRST && s.replyRST(now, id, r) {
			s.stats.ConnLimitRsts++
		}
		return
	}
	// A full accept queue drops the SYN (Linux: ListenOverflows and
	// ListenDrops); the client retries.
	if len(l.acceptQ) >= l.backlog {
		s.stats.ListenOverflows++
		s.stats.ListenDrops++
		s.stats.Drops.AcceptQueueFull++
		return
	}
	if l.synQ >= s.cfg.SynBacklog {
		if s.cfg.SynCookies {
			l.sendCookie(now, id, r)
			return
		}
		s.stats.ListenDrops++
		s.stats.Drops.SynQueueFull++
		return
	}
	c := s.newConn(id, s.isn(now, id))
	if l.cc != "" {
		_ = c.SetCongestionControl(l.cc)
	}
	c.listener = l
	l.synQ++
	c.setState(StateSynReceived)
	c.irs = r.Seq
	c.rcvNxt = r.Seq + 1
	c.negotiate(r, now)
	// Window of the SYN, unscaled; taken as the send window until the
	// handshake's ACK brings a scaled one.
	c.sndWnd = int(r.Window)
	c.sendSYN(now, false)
	s.afterConn(now, c)
}

// sendCookie answers a SYN without keeping state (RFC 4987 section 3.6).
func (l *Listener) sendCookie(now time.Duration, id fourTuple, r *Repr) {
	s := l.s
	peerMSS := uint16(536)
	if r.MSS != 0 {
		peerMSS = r.MSS
	}
	mss := minInt(int(peerMSS), s.advMSS)
	var o Repr
	o.SrcPort, o.DstPort = id.localPort, id.remotePort
	o.Flags = FlagSYN | FlagACK
	o.Seq = s.makeCookie(now, id, r.Seq, uint16(mss))
	o.Ack = r.Seq + 1
	o.MSS = uint16(s.advMSS)
	sack := s.cfg.SACK && r.SACKPermitted
	ws := s.cfg.WindowScaling && r.HasWScale
	if s.cfg.Timestamps && r.HasTS {
		// Options ride in TSval (Linux cookie_init_timestamp), kept <=
		// the clock so our later timestamps never go backwards.
		now32 := uint32(now/s.cfg.TimestampTick) + s.tsOffsetFor(id)
		ts := cookieTSVal(now32, ws, r.WScale, sack)
		if int32(ts-now32) > 0 {
			ts -= 1 << cookieTSBits
		}
		o.HasTS, o.TSVal, o.TSEcr = true, ts, r.TSVal
		o.SACKPermitted = sack
		if ws {
			o.HasWScale, o.WScale = true, rcvWscaleFor(s.cfg.RecvBuffer)
		}
	}
	o.Window = uint16(minInt(s.cfg.RecvBuffer, 0xffff))
	l.sentCookie = true
	l.cookieAt = now
	s.stats.SynCookiesSent++
	s.stats.ListenOverflows++
	s.send(now, id, &o, nil, 0, 0)
}

func rcvWscaleFor(buf int) uint8 {
	var w uint8
	for w < 14 && buf>>w > 0xffff {
		w++
	}
	return w
}

func (s *Stack) tsOffsetFor(id fourTuple) uint32 {
	var w [hashWordsMax]uint64
	return uint32(sipHash24(s.tsKey, id.words(&w)))
}

// cookieACK validates an ACK as the third step of a cookie handshake
// and, if valid, creates the connection directly in ESTABLISHED.
func (l *Listener) cookieACK(now time.Duration, id fourTuple, r *Repr) bool {
	s := l.s
	mss, ok := s.checkCookie(now, id, r.Seq-1, r.Ack-1)
	if !ok {
		s.stats.SynCookiesFailed++
		return false
	}
	if len(l.acceptQ) >= l.backlog || s.full() {
		s.stats.ListenOverflows++
		s.stats.ListenDrops++
		s.stats.Drops.AcceptQueueFull++
		return true // dropped; the client retransmits
	}
	s.stats.SynCookiesValid++
	c := s.newConn(id, r.Ack-1)
	if l.cc != "" {
		_ = c.SetCongestionControl(l.cc)
	}
	syn := Repr{MSS: mss}
	if r.HasTS && s.cfg.Timestamps {
		syn.HasTS, syn.TSVal = true, r.TSVal
		syn.HasWScale, syn.WScale, syn.SACKPermitted = cookieTSDecode(r.TSEcr)
	}
	c.irs = r.Seq - 1
	c.rcvNxt = r.Seq
	c.sndUna = r.Ack
	c.sndNxt = r.Ack
	c.sndMax = r.Ack
	c.sndBufSeq = r.Ack
	c.negotiate(&syn, now)
	c.rcvAdvEdge = c.rcvNxt.Add(minInt(s.cfg.RecvBuffer, 0xffff))
	c.lastAckSent = c.rcvNxt
	c.listener = l
	l.synQ++ // balanced by established
	c.setState(StateSynReceived)
	s.stats.PassiveOpens++
	c.establish(now, r)
	l.established(c) // l is open: it is receiving this segment
	// The ACK may carry data already.
	if len(r.Payload) > 0 || r.Flags&FlagFIN != 0 {
		c.input(now, r)
	}
	s.afterConn(now, c)
	return true
}
