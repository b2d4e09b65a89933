package icmpv6

// Stats are the ICMPv6 counters of one stack instance, after RFC 4293's
// icmpStatsTable and icmpMsgStatsTable for IPv6 (the Icmp6 lines of
// Linux's /proc/net/snmp6).
type Stats struct {
	// InMsgs: messages received, errors included.
	InMsgs uint64 `json:"in_msgs"`
	// InErrors: messages dropped as malformed (all reasons below).
	InErrors      uint64 `json:"in_errors"`
	InCsumErrors  uint64 `json:"in_csum_errors"`
	InTruncated   uint64 `json:"in_truncated"`
	InBadQuote    uint64 `json:"in_bad_quote"`
	InDestUnreach uint64 `json:"in_dest_unreachs"`
	InPktTooBigs  uint64 `json:"in_pkt_too_bigs"`
	InTimeExcds   uint64 `json:"in_time_excds"`
	InParmProbs   uint64 `json:"in_parm_problems"`
	InEchos       uint64 `json:"in_echos"`
	InEchoReplies uint64 `json:"in_echo_replies"`
	// Neighbor Discovery and MLD, counted here for stack/ndp.
	InRouterSolicits         uint64 `json:"in_router_solicits"`
	InRouterAdvertisements   uint64 `json:"in_router_advertisements"`
	InNeighborSolicits       uint64 `json:"in_neighbor_solicits"`
	InNeighborAdvertisements uint64 `json:"in_neighbor_advertisements"`
	InRedirects              uint64 `json:"in_redirects"`
	InGroupMembQueries       uint64 `json:"in_group_memb_queries"`
	InMLDv2Reports           uint64 `json:"in_mldv2_reports"`
	// InUnknownErrors: error messages of unknown types, which RFC 4443
	// section 2.4 (a) passes to the upper layer they quote.
	InUnknownErrors uint64 `json:"in_unknown_errors"`
	// InUnknownInformational: informational messages of unknown types,
	// silently discarded (RFC 4443 section 2.4 (b)).
	InUnknownInformational uint64 `json:"in_unknown_informational"`
	// InEchosIgnored: echo requests not answered (to a multicast group
	// with multicast echo off, or from a source that names no node).
	InEchosIgnored uint64 `json:"in_echos_ignored"`

	// OutMsgs: messages sent.
	OutMsgs uint64 `json:"out_msgs"`
	// OutErrors: error messages sent.
	OutErrors      uint64 `json:"out_errors"`
	OutDestUnreach uint64 `json:"out_dest_unreachs"`
	OutPktTooBigs  uint64 `json:"out_pkt_too_bigs"`
	OutTimeExcds   uint64 `json:"out_time_excds"`
	OutParmProbs   uint64 `json:"out_parm_problems"`
	OutEchos       uint64 `json:"out_echos"`
	OutEchoReplies uint64 `json:"out_echo_replies"`
	// OutRateLimited: errors not sent because the token bucket was empty
	// (RFC 4443 section 2.4 (f)).
	OutRateLimited uint64 `json:"out_rate_limited"`
	// Errors not sent by RFC 4443 section 2.4 (e), by reason.
	OutSuppressedAboutError uint64 `json:"out_suppressed_about_error"`
	OutSuppressedMulticast  uint64 `json:"out_suppressed_multicast"`
	OutSuppressedSource     uint64 `json:"out_suppressed_source"`
	// OutDropped: messages built but not sent (no mbuf, no route, no
	// neighbour); for the caller to count.
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

// CountIn counts a received, parsed message by type.
func (s *Stats) CountIn(t Type) {
	switch t {
	case TypeDestUnreach:
		s.InDestUnreach++
	case TypePacketTooBig:
		s.InPktTooBigs++
	case TypeTimeExceeded:
		s.InTimeExcds++
	case TypeParamProblem:
		s.InParmProbs++
	case TypeEchoRequest:
		s.InEchos++
	case TypeEchoReply:
		s.InEchoReplies++
	case TypeRouterSolicitation:
		s.InRouterSolicits++
	case TypeRouterAdvertisement:
		s.InRouterAdvertisements++
	case TypeNeighborSolicitation:
		s.InNeighborSolicits++
	case TypeNeighborAdvertisement:
		s.InNeighborAdvertisements++
	case TypeRedirect:
		s.InRedirects++
	case TypeMLDQuery:
		s.InGroupMembQueries++
	case TypeMLDv2Report:
		s.InMLDv2Reports++
	default:
		if t.IsError() {
			s.InUnknownErrors++
		} else {
			s.InUnknownInformational++
		}
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
		s.OutDestUnreach++
	case TypePacketTooBig:
		s.OutPktTooBigs++
	case TypeTimeExceeded:
		s.OutTimeExcds++
	case TypeParamProblem:
		s.OutParmProbs++
	case TypeEchoRequest:
		s.OutEchos++
	case TypeEchoReply:
		s.OutEchoReplies++
	}
}

// CountSuppress counts an error not sent by reason.
func (s *Stats) CountSuppress(r Suppress) {
	switch r {
	case SuppressAboutError:
		s.OutSuppressedAboutError++
	case SuppressMulticast:
		s.OutSuppressedMulticast++
	case SuppressSource:
		s.OutSuppressedSource++
	case SuppressRateLimited:
		s.OutRateLimited++
	}
}
