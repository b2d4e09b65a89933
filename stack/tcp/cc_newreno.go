package tcp

import "time"

// newReno is the congestion control of RFC 5681 (slow start and
// congestion avoidance); the fast recovery it is named for (RFC 6582) is
// done by the engine (rcv.go: onDupAck, enterRecovery, newAck; snd.go:
// retransmitFirst, sackRecoverySend).
type newReno struct {
	// bytesAcked accumulates acked octets in congestion avoidance, the
	// byte-counting variant of RFC 5681 section 3.1 (equation 3 note,
	// RFC 3465).
	bytesAcked int
}

func (r *newReno) name() string { return CCNewReno }

func (r *newReno) init(s *ccState, iw int) {
	// RFC 6928: IW = min(10*MSS, max(2*MSS, 14600)) for 10 segments.
	s.cwnd = iw * s.mss
	s.ssthresh = 1 << 30 // "arbitrarily high" (RFC 5681 section 3.1)
}

func (r *newReno) onAck(s *ccState, _ time.Duration, acked, _ int) {
	if s.cwnd < s.ssthresh {
		// Slow start, RFC 5681 (2) with appropriate byte counting
		// (RFC 3465, L = 2*SMSS).
		inc := acked
		if inc > 2*s.mss {
			inc = 2 * s.mss
		}
		s.cwnd += inc
		return
	}
	// Congestion avoidance: one SMSS per cwnd of acked data.
	r.bytesAcked += acked
	if r.bytesAcked >= s.cwnd {
		r.bytesAcked -= s.cwnd
		s.cwnd += s.mss
	}
}

func (r *newReno) onLoss(s *ccState, _ time.Duration, flight int) {
	// RFC 5681 equation (4).
	s.ssthresh = maxInt(flight/2, 2*s.mss)
	r.bytesAcked = 0
}

// onRecoveryEnd has nothing to do: the engine itself deflates the window
// on the full acknowledgment (RFC 6582 section 3.2 step 3), and the
// byte count was reset when recovery began.
func (r *newReno) onRecoveryEnd(s *ccState, _ time.Duration) {}

func (r *newReno) onRTO(s *ccState, _ time.Duration, flight int) {
	s.ssthresh = maxInt(flight/2, 2*s.mss)
	s.cwnd = s.mss
	r.bytesAcked = 0
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}
