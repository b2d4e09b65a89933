package icmp

// Stats are the ICMP counters of one stack instance, after RFC 4293's
// icmpStatsTable and icmpMsgStatsTable (`netstat -s` Icmp: and IcmpMsg:).
type Stats struct {
	// InMsgs: messages received, errors included.
	InMsgs uint64 `json:"in_msgs"`
	// InErrors: messages dropped as malformed (all reasons below).
	InErrors       uint64 `json:"in_errors"`
	InCsumErrors   uint64 `json:"in_csum_errors"`
	InTruncated    uint64 `json:"in_truncated"`
	InBadQuote     uint64 `json:"in_bad_quote"`
	InDestUnreachs uint64 `json:"in_dest_unreachs"`
	InTimeExcds    uint64 `json:"in_time_excds"`
	InParmProbs    uint64 `json:"in_parm_probs"`
	InSrcQuenchs   uint64 `json:"in_src_quenchs"`
	InRedirects    uint64 `json:"in_redirects"`
	InEchos        uint64 `json:"in_echos"`
	InEchoReps     uint64 `json:"in_echo_reps"`
	InTimestamps   uint64 `json:"in_timestamps"`
	InOtherTypes   uint64 `json:"in_other_types"`
	// InEchosIgnored: echo requests to a broadcast address, not answered
	// (RFC 1122 section 3.2.2.6 allows silently discarding them).
	InEchosIgnored uint64 `json:"in_echos_ignored"`
	// InErrorsDelivered: errors handed to the transport they quote.
	InErrorsDelivered uint64 `json:"in_errors_delivered"`

	// OutMsgs: messages sent.
	OutMsgs         uint64 `json:"out_msgs"`
	OutErrors       uint64 `json:"out_errors"` // error messages sent
	OutDestUnreachs uint64 `json:"out_dest_unreachs"`
	OutTimeExcds    uint64 `json:"out_time_excds"`
	OutParmProbs    uint64 `json:"out_parm_probs"`
	OutEchos        uint64 `json:"out_echos"`
	OutEchoReps     uint64 `json:"out_echo_reps"`
	// OutRateLimited: errors not sent because the token bucket was empty.
	OutRateLimited uint64 `json:"out_rate_limited"`
	// Errors not sent by RFC 1122 section 3.2.2, by reason.
	OutSuppressedAboutError uint64 `json:"out_suppressed_about_error"`
	OutSuppressedBroadcast  uint64 `json:"out_suppressed_broadcast"`
	OutSuppressedFragment   uint64 `json:"out_suppressed_fragment"`
	OutSuppressedSource     uint64 `json:"out_suppressed_source"`
	// OutDropped: messages that could not be sent (no mbuf, no route,
	// ARP); the IP counters say why.
	OutDropped uint64 `json:"out_dropped"`
}

// CountError counts a parse failure by reason.
func (s *Stats) CountError(err error) {
	s.InErrors++
	e, _ := err.(Error)
	switch e {
	case ErrTruncated:
		s.InTruncated++
	case ErrChecksum:
		s.InCsumErrors++
	default:
		s.InBadQuote++
	}
}

// CountSuppress counts an error not sent by reason.
func (s *Stats) CountSuppress(r Suppress) {
	switch r {
	case SuppressAboutError:
		s.OutSuppressedAboutError++
	case SuppressBroadcast:
		s.OutSuppressedBroadcast++
	case SuppressFragment:
		s.OutSuppressedFragment++
	case SuppressSource:
		s.OutSuppressedSource++
	}
}

// CountIn counts a received, parsed message by type.
func (s *Stats) CountIn(t Type) {
	switch t {
	case TypeDestUnreach:
		s.InDestUnreachs++
	case TypeTimeExceeded:
		s.InTimeExcds++
	case TypeParamProblem:
		s.InParmProbs++
	case TypeSourceQuench:
		s.InSrcQuenchs++
	case TypeRedirect:
		s.InRedirects++
	case TypeEchoRequest:
		s.InEchos++
	case TypeEchoReply:
		s.InEchoReps++
	case TypeTimestamp:
		s.InTimestamps++
	default:
		s.InOtherTypes++
	}
}

// CountOut counts a message sent by type.
func (s *Stats) CountOut(t Type) {
	s.OutMsgs++
	if t.IsError() {
		s.OutErrors++
	}
	switch t {
	case TypeDestUnreach:
		s.OutDestUnreachs++
	case TypeTimeExceeded:
		s.OutTimeExcds++
	case TypeParamProblem:
		s.OutParmProbs++
	case TypeEchoRequest:
		s.OutEchos++
	case TypeEchoReply:
		s.OutEchoReps++
	}
}
