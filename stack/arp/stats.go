package arp

// Stats are the cache's counters.
type Stats struct {
	// Packets received and parsed, by operation.
	RxRequests uint64 `json:"rx_requests"`
	RxReplies  uint64 `json:"rx_replies"`
	// RxIgnored: valid packets neither for us nor about a known sender.
	RxIgnored uint64 `json:"rx_ignored"`
	// RxConflicts: packets claiming our address from another MAC
	// (RFC 5227 section 2.4); never learnt.
	RxConflicts uint64 `json:"rx_conflicts"`
	// Malformed packets by reason (see Error).
	RxTruncated       uint64 `json:"rx_truncated"`
	RxBadHardwareType uint64 `json:"rx_bad_hardware_type"`
	RxBadProtocolType uint64 `json:"rx_bad_protocol_type"`
	RxBadOperation    uint64 `json:"rx_bad_operation"`
	RxBadSenderAddr   uint64 `json:"rx_bad_sender_addr"`

	// Packets handed to the sink for transmission.
	TxRequests   uint64 `json:"tx_requests"`
	TxReplies    uint64 `json:"tx_replies"`
	TxGratuitous uint64 `json:"tx_gratuitous"`
	// TxRefreshes are unicast re-validation requests.
	TxRefreshes uint64 `json:"tx_refreshes"`

	// Entry life.
	Learned         uint64 `json:"learned"`          // entries created from a received packet
	Resolved        uint64 `json:"resolved"`         // resolutions completed
	Updated         uint64 `json:"updated"`          // entries whose MAC changed
	ResolveTimeouts uint64 `json:"resolve_timeouts"` // resolutions given up after MaxRequests
	Expired         uint64 `json:"expired"`          // entries removed after ReachableTime
	Evicted         uint64 `json:"evicted"`          // entries removed to make room

	// Pending packets.
	PendingQueued        uint64 `json:"pending_queued"`
	PendingSent          uint64 `json:"pending_sent"`
	PendingDropDestFull  uint64 `json:"pending_drop_dest_full"`
	PendingDropTotalFull uint64 `json:"pending_drop_total_full"`
	PendingDropTimeout   uint64 `json:"pending_drop_timeout"`
	PendingDropEvicted   uint64 `json:"pending_drop_evicted"`
	PendingDropFlushed   uint64 `json:"pending_drop_flushed"`
}

// CountError counts a parse failure by reason.
func (s *Stats) CountError(err error) {
	e, _ := err.(Error)
	switch e {
	case ErrTruncated:
		s.RxTruncated++
	case ErrHardwareType:
		s.RxBadHardwareType++
	case ErrProtocolType:
		s.RxBadProtocolType++
	case ErrOperation:
		s.RxBadOperation++
	default:
		s.RxBadSenderAddr++
	}
}
