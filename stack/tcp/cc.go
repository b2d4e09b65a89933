package tcp

import (
	"fmt"
	"time"
)

// ccState is what a congestion controller reads and changes, kept in the
// connection: congestion window and slow-start threshold in bytes
// (RFC 5681 section 3.1).
type ccState struct {
	cwnd     int
	ssthresh int
	mss      int
	// srtt is the smoothed RTT, for controllers that use time (CUBIC).
	srtt time.Duration
}

// congestionControl is the pluggable part of RFC 5681 congestion
// control. The engine itself does loss detection and recovery (RFC 5681,
// 6582, 6675) and calls these hooks.
type congestionControl interface {
	// name returns "newreno" or "cubic".
	name() string
	// init sets the initial window (RFC 5681 section 3.1, RFC 6928).
	init(s *ccState, initialWindow int)
	// onAck grows the window for acked new bytes outside recovery;
	// flight is the data outstanding before the ACK.
	onAck(s *ccState, now time.Duration, acked, flight int)
	// onLoss sets ssthresh (and the controller's own state) when fast
	// retransmit starts recovery; flight is FlightSize.
	onLoss(s *ccState, now time.Duration, flight int)
	// onRecoveryEnd is called when recovery ends (full ACK).
	onRecoveryEnd(s *ccState, now time.Duration)
	// onRTO is called on retransmission timeout (RFC 5681 section 3.1,
	// equation 4: ssthresh = max(FlightSize/2, 2*SMSS); cwnd = 1 SMSS).
	onRTO(s *ccState, now time.Duration, flight int)
}

func newCC(name string) (congestionControl, error) {
	switch name {
	case CCNewReno:
		return &newReno{}, nil
	case CCCubic:
		return &cubic{}, nil
	}
	return nil, fmt.Errorf("unknown congestion control %q (want %q or %q)", name, CCNewReno, CCCubic)
}
