package tcp

import "time"

// tokenBucket limits replies a peer can draw at will to rate a second,
// with a bucket one second deep (rate tokens), on the caller's clock.
// Credit is kept in nanoseconds so that no rounding drifts. A rate of 0
// allows nothing.
type tokenBucket struct {
	interval time.Duration // the time that buys one token
	depth    time.Duration // the credit a full bucket holds
	credit   time.Duration
	last     time.Duration
}

func newTokenBucket(rate int) tokenBucket {
	if rate <= 0 {
		return tokenBucket{}
	}
	iv := max(time.Second/time.Duration(rate), 1)
	d := iv * time.Duration(rate)
	return tokenBucket{interval: iv, depth: d, credit: d}
}

// allow takes a token if one is there at now.
func (b *tokenBucket) allow(now time.Duration) bool {
	if b.interval == 0 {
		return false
	}
	if now > b.last {
		b.credit = min(b.credit+now-b.last, b.depth)
		b.last = now
	}
	if b.credit < b.interval {
		return false
	}
	b.credit -= b.interval
	return true
}

// oowLimited applies Config.InvalidRateLimit to an ACK c would send to
// an invalid segment (Linux's __tcp_oow_rate_limited): it reports true,
// counting in skipped, when the last such ACK went out less than the
// limit ago; otherwise it records now as the time of this one.
func (c *Conn) oowLimited(now time.Duration, skipped *uint64) bool {
	lim := c.s.cfg.InvalidRateLimit
	if o := c.opts; lim > 0 && o != nil && o.oowAcked && now >= o.lastOOWAck && now-o.lastOOWAck < lim {
		*skipped++
		return true
	}
	o := c.options()
	o.oowAcked = true
	o.lastOOWAck = now
	return false
}

// oowAckLimited is oowLimited for the ACK to segment r, exempting what
// carries data or FIN without SYN: a retransmission the peer needs a
// duplicate ACK for, not part of an ACK loop (Linux's
// tcp_oow_rate_limited).
func (c *Conn) oowAckLimited(now time.Duration, r *Repr, skipped *uint64) bool {
	if r.SegLen() > 0 && r.Flags&FlagSYN == 0 {
		return false
	}
	return c.oowLimited(now, skipped)
}
