package tcp

import (
	"math"
	"time"
)

// CUBIC constants, RFC 9438 section 4.
const (
	cubicC    = 0.4 // section 5: C = 0.4
	cubicBeta = 0.7 // section 4.6: beta_cubic = 0.7
	// alpha_cubic = 3*(1-beta)/(1+beta) (section 4.3) makes the
	// Reno-friendly estimate grow like Reno with beta = 0.5.
	cubicAlpha = 3 * (1 - cubicBeta) / (1 + cubicBeta)
)

// cubic is the CUBIC congestion controller of RFC 9438, with the
// Reno-friendly region (section 4.3) and fast convergence (section 4.7).
// Windows are kept in segments as float64 internally, cwnd in bytes.
type cubic struct {
	wMax       float64       // window before the last reduction (segments)
	k          float64       // seconds to reach wMax again (equation 2)
	epochStart time.Duration // start of the congestion-avoidance epoch
	inEpoch    bool
	cwndEpoch  float64 // cwnd at epoch start (segments)
	wEst       float64 // Reno-friendly estimate (section 4.3)
	frac       float64 // fractional bytes of window growth carried over
	renoAcked  int     // slow start / fallback byte counting
}

func (c *cubic) name() string { return CCCubic }

func (c *cubic) init(s *ccState, iw int) {
	s.cwnd = iw * s.mss
	s.ssthresh = 1 << 30
	*c = cubic{}
}

// wCubic is equation (1): W_cubic(t) = C*(t-K)^3 + W_max.
func (c *cubic) wCubic(t float64) float64 {
	d := t - c.k
	return cubicC*d*d*d + c.wMax
}

func (c *cubic) onAck(s *ccState, now time.Duration, acked, _ int) {
	mss := float64(s.mss)
	if s.cwnd < s.ssthresh {
		// Slow start as in RFC 5681 (RFC 9438 section 4.10).
		inc := minInt(acked, 2*s.mss)
		s.cwnd += inc
		return
	}
	cwnd := float64(s.cwnd) / mss
	if !c.inEpoch {
		// Section 4.2: a new epoch starts at the first ACK in
		// congestion avoidance.
		c.inEpoch = true
		c.epochStart = now
		c.cwndEpoch = cwnd
		if c.wMax < cwnd {
			// No loss yet, or the window grew past W_max in slow
			// start: the curve starts at its plateau.
			c.wMax = cwnd
		}
		c.k = math.Cbrt((c.wMax - c.cwndEpoch) / cubicC)
		c.wEst = cwnd
	}
	segsAcked := float64(acked) / mss
	// Section 4.3: W_est += alpha_cubic * segments_acked / cwnd.
	c.wEst += cubicAlpha * segsAcked / cwnd
	t := (now - c.epochStart).Seconds()
	rtt := s.srtt.Seconds()
	if c.wCubic(t) < c.wEst {
		// Reno-friendly region: follow the estimate.
		if c.wEst > cwnd {
			s.cwnd = int(c.wEst * mss)
		}
		return
	}
	// Concave and convex regions (sections 4.4, 4.5): target is
	// W_cubic(t+RTT) clamped to [cwnd, 1.5*cwnd]; cwnd grows by
	// (target - cwnd)/cwnd per acked segment.
	target := c.wCubic(t + rtt)
	if target < cwnd {
		target = cwnd
	}
	if target > 1.5*cwnd {
		target = 1.5 * cwnd
	}
	c.frac += (target - cwnd) / cwnd * segsAcked * mss
	if c.frac >= 1 {
		inc := int(c.frac)
		s.cwnd += inc
		c.frac -= float64(inc)
	}
}

func (c *cubic) reduce(s *ccState, flight int) {
	mss := float64(s.mss)
	cwnd := float64(s.cwnd) / mss
	// Section 4.7 fast convergence: release bandwidth when the window
	// stopped short of the previous W_max.
	if cwnd < c.wMax {
		c.wMax = cwnd * (1 + cubicBeta) / 2
	} else {
		c.wMax = cwnd
	}
	// Section 4.6: ssthresh = cwnd * beta_cubic (at least 2 segments).
	s.ssthresh = maxInt(int(cwnd*cubicBeta*mss), 2*s.mss)
	c.inEpoch = false
	c.frac = 0
}

func (c *cubic) onLoss(s *ccState, _ time.Duration, flight int) { c.reduce(s, flight) }

// onRecoveryEnd has nothing to do: the engine deflates cwnd on the full
// acknowledgment, and reduce already ended the epoch, so the next ACK in
// congestion avoidance starts a new one (RFC 9438 section 4.2).
func (c *cubic) onRecoveryEnd(s *ccState, _ time.Duration) {}

func (c *cubic) onRTO(s *ccState, _ time.Duration, flight int) {
	// Section 4.8: on RTO, reduce as for a congestion event and restart
	// from one segment in slow start.
	c.reduce(s, flight)
	s.cwnd = s.mss
}
