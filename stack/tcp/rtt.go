package tcp

import "time"

// rttEstimator implements RFC 6298's retransmission timer computation.
// Its bounds are the stack's (one rtoBounds for every connection), so
// that a million connections do not each keep a copy.
type rttEstimator struct {
	srtt, rttvar time.Duration
	rto          time.Duration
	bounds       *rtoBounds
	// clock granularity G of RFC 6298 section 2: the engine works in
	// nanoseconds, but a 1 us floor keeps K*RTTVAR meaningful.
	backoff   int32 // number of consecutive RTO expirations (at most 32)
	hasSample bool
}

// rtoBounds are the RTO's minimum and maximum (Config.MinRTO, MaxRTO).
type rtoBounds struct {
	min, max time.Duration
}

const rttGranularity = time.Microsecond

func newRTTEstimator(initial time.Duration, b *rtoBounds) rttEstimator {
	return rttEstimator{rto: clampDur(initial, b.min, b.max), bounds: b}
}

func clampDur(d, lo, hi time.Duration) time.Duration {
	if d < lo {
		return lo
	}
	if d > hi {
		return hi
	}
	return d
}

// sample feeds one round-trip measurement R (RFC 6298 sections 2.2, 2.3).
// The caller guarantees Karn's algorithm (section 3): R never comes from
// a retransmitted segment.
func (e *rttEstimator) sample(r time.Duration) {
	if r <= 0 {
		r = rttGranularity
	}
	if !e.hasSample {
		// (2.2) SRTT <- R, RTTVAR <- R/2.
		e.srtt = r
		e.rttvar = r / 2
		e.hasSample = true
	} else {
		// (2.3) RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|,
		//       SRTT   <- 7/8 SRTT + 1/8 R'.
		d := e.srtt - r
		if d < 0 {
			d = -d
		}
		e.rttvar = (3*e.rttvar + d) / 4
		e.srtt = (7*e.srtt + r) / 8
	}
	// RTO <- SRTT + max(G, K*RTTVAR), K = 4, then (2.4) the minimum and
	// (2.5) the maximum.
	k := 4 * e.rttvar
	if k < rttGranularity {
		k = rttGranularity
	}
	e.backoff = 0
	e.rto = clampDur(e.srtt+k, e.bounds.min, e.bounds.max)
}

// current returns the RTO including exponential backoff (RFC 6298
// section 5.5: double the timer on each expiry, capped at max).
func (e *rttEstimator) current() time.Duration {
	d := e.rto
	for i := int32(0); i < e.backoff && d < e.bounds.max; i++ {
		d *= 2
	}
	return clampDur(d, e.bounds.min, e.bounds.max)
}

// expired records a timeout: RFC 6298 (5.5) backs the timer off.
func (e *rttEstimator) expired() {
	if e.backoff < 32 {
		e.backoff++
	}
}
