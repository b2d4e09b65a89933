package tcp

// Stats are the stack's counters, in the spirit of `netstat -s` / nstat
// (Linux's TcpExt and Tcp MIB names in snake_case).
type Stats struct {
	ActiveOpens       uint64 `json:"active_opens"`
	PassiveOpens      uint64 `json:"passive_opens"`
	AttemptFails      uint64 `json:"attempt_fails"`
	EstabResets       uint64 `json:"estab_resets"`
	CurrEstab         uint64 `json:"curr_estab"`
	InSegs            uint64 `json:"in_segs"`
	OutSegs           uint64 `json:"out_segs"`
	RetransSegs       uint64 `json:"retrans_segs"`
	InErrs            uint64 `json:"in_errs"`
	InCsumErrors      uint64 `json:"in_csum_errors"`
	OutRsts           uint64 `json:"out_rsts"`
	InRsts            uint64 `json:"in_rsts"`
	DupAcks           uint64 `json:"dup_acks"`
	FastRetransmits   uint64 `json:"fast_retransmits"`
	SackRecoveries    uint64 `json:"sack_recoveries"`
	RenoRecoveries    uint64 `json:"reno_recoveries"`
	RtoTimeouts       uint64 `json:"rto_timeouts"`
	SynCookiesSent    uint64 `json:"syn_cookies_sent"`
	SynCookiesValid   uint64 `json:"syn_cookies_valid"`
	SynCookiesFailed  uint64 `json:"syn_cookies_failed"`
	ChallengeAcks     uint64 `json:"challenge_acks"`
	PawsRejected      uint64 `json:"paws_rejected"`
	OfoQueued         uint64 `json:"ofo_queued"`
	OfoDropped        uint64 `json:"ofo_dropped"`
	ListenOverflows   uint64 `json:"listen_overflows"`
	ListenDrops       uint64 `json:"listen_drops"`
	ZeroWindowProbes  uint64 `json:"zero_window_probes"`
	KeepaliveProbes   uint64 `json:"keepalive_probes"`
	KeepaliveTimeouts uint64 `json:"keepalive_timeouts"`
	TimewaitConns     uint64 `json:"timewait_conns"`
	DelayedAcks       uint64 `json:"delayed_acks"`
	ConnLimitRefused  uint64 `json:"conn_limit_refused"`
	// ConnLimitRsts counts the SYNs past the connection limit answered
	// with a RST (conn_limit_action rst).
	ConnLimitRsts uint64 `json:"conn_limit_rsts"`
	// RstRateLimited counts RSTs for segments with no connection (closed
	// ports, refusals, bad ACKs in LISTEN) not sent because of
	// rst_rate_limit.
	RstRateLimited uint64 `json:"rst_rate_limited"`
	// AckSkippedSeq, AckSkippedPaws and AckSkippedChallenge count ACKs
	// to invalid segments (out of window, PAWS-rejected) and challenge
	// ACKs not sent because of invalid_ratelimit (Linux's
	// TCPACKSkippedSeq, TCPACKSkippedPAWS, TCPACKSkippedChallenge).
	AckSkippedSeq       uint64 `json:"ack_skipped_seq"`
	AckSkippedPaws      uint64 `json:"ack_skipped_paws"`
	AckSkippedChallenge uint64 `json:"ack_skipped_challenge"`
	// MemInUse is the buffer capacity this stack's connections hold now
	// (a gauge), MemPeak the most since the last reset; both count
	// against the memory budget (tcp_mem).
	MemInUse int64 `json:"mem_in_use_bytes"`
	MemPeak  int64 `json:"mem_peak_bytes"`
	// MemPressureEntries counts the times a charge of this stack took
	// the memory budget into pressure (Linux's TCPMemoryPressures).
	MemPressureEntries uint64 `json:"mem_pressure_entries"`
	// SndMemRefused counts writes cut short (or refused) because the
	// memory budget kept the send buffer from growing.
	SndMemRefused   uint64    `json:"snd_mem_refused"`
	RetransTimeouts uint64    `json:"retrans_give_ups"`
	InDataBytes     uint64    `json:"in_data_bytes"`
	OutDataBytes    uint64    `json:"out_data_bytes"`
	Drops           DropStats `json:"drops"`
}

// DropStats counts dropped input segments by reason.
type DropStats struct {
	Checksum           uint64 `json:"checksum"`
	Malformed          uint64 `json:"malformed"`
	BadOption          uint64 `json:"bad_option"`
	NoSocket           uint64 `json:"no_socket"`
	OutOfWindow        uint64 `json:"out_of_window"`
	BadAck             uint64 `json:"bad_ack"`
	Paws               uint64 `json:"paws"`
	RstInvalid         uint64 `json:"rst_invalid"`
	SynInvalid         uint64 `json:"syn_invalid"`
	NoAckFlag          uint64 `json:"no_ack_flag"`
	SynQueueFull       uint64 `json:"syn_queue_full"`
	AcceptQueueFull    uint64 `json:"accept_queue_full"`
	ChallengeRateLimit uint64 `json:"challenge_rate_limit"`
	AfterClose         uint64 `json:"after_close"`
	RecvBufferFull     uint64 `json:"recv_buffer_full"`
	// RcvMemDrop counts segments whose data (or part of it) lay beyond
	// the advertised window while the memory budget was under pressure
	// or over high, and was dropped rather than held.
	RcvMemDrop uint64 `json:"rcv_mem_drop"`
	OfoLimit   uint64 `json:"ofo_limit"`
	Output     uint64 `json:"output"`
}
