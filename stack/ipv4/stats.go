package ipv4

// Stats are the IP counters of one stack instance, named after the
// ipSystemStats objects of RFC 4293 (and the Ip: lines of `netstat -s`),
// plus the reasons behind the aggregate drop counters.
type Stats struct {
	// InReceives: datagrams handed to IP input, errors included.
	InReceives uint64 `json:"in_receives"`
	// InHdrErrors: datagrams dropped for a bad header (all Rx* reasons
	// below). A TTL of zero is not an error at a host (RFC 1122 section
	// 3.2.1.7).
	InHdrErrors uint64 `json:"in_hdr_errors"`
	// InAddrErrors: datagrams not for this host (wrong destination) or
	// with an impossible source (multicast, broadcast, loopback).
	InAddrErrors uint64 `json:"in_addr_errors"`
	// InUnknownProtos: datagrams for a protocol with no handler.
	InUnknownProtos uint64 `json:"in_unknown_protos"`
	// InDiscards: datagrams dropped for lack of resources (fragments
	// refused because the reassembly table or byte budget was full).
	InDiscards uint64 `json:"in_discards"`
	// InDelivers: datagrams handed to ICMP, UDP or TCP.
	InDelivers uint64 `json:"in_delivers"`
	// OutRequests: datagrams the transports asked IP to send.
	OutRequests uint64 `json:"out_requests"`
	// OutDiscards: datagrams dropped on output for lack of resources
	// (no mbuf, ARP queue full, resolution failed).
	OutDiscards uint64 `json:"out_discards"`
	// OutNoRoutes: datagrams with no route (off-link and no gateway).
	OutNoRoutes uint64 `json:"out_no_routes"`
	// ReasmReqds: fragments received that needed reassembly.
	ReasmReqds uint64 `json:"reasm_reqds"`
	// ReasmOKs: datagrams reassembled.
	ReasmOKs uint64 `json:"reasm_oks"`
	// ReasmFails: failures of reassembly (datagrams or fragments given
	// up on, any reason below).
	ReasmFails uint64 `json:"reasm_fails"`
	// ReasmTimeout: datagrams given up after the reassembly timeout.
	ReasmTimeout uint64 `json:"reasm_timeout"`
	// FragOKs: datagrams fragmented on output.
	FragOKs uint64 `json:"frag_oks"`
	// FragFails: datagrams that needed fragmenting and could not be (DF
	// set, or no mbuf).
	FragFails uint64 `json:"frag_fails"`
	// FragCreates: fragments generated.
	FragCreates uint64 `json:"frag_creates"`

	// Header errors by reason.
	RxTruncated     uint64 `json:"rx_truncated"`
	RxBadVersion    uint64 `json:"rx_bad_version"`
	RxBadHeaderLen  uint64 `json:"rx_bad_header_len"`
	RxBadTotalLen   uint64 `json:"rx_bad_total_len"`
	RxBadChecksum   uint64 `json:"rx_bad_checksum"`
	RxBadFragLength uint64 `json:"rx_bad_frag_length"`
	RxFragTooLong   uint64 `json:"rx_frag_too_long"`
	// RxChecksumOffloaded: headers the NIC verified (not summed here).
	RxChecksumOffloaded uint64 `json:"rx_checksum_offloaded"`

	// Reassembly failures by reason.
	ReasmOverlaps     uint64 `json:"reasm_overlaps"`
	ReasmDuplicates   uint64 `json:"reasm_duplicates"`
	ReasmInconsistent uint64 `json:"reasm_inconsistent"`
	ReasmTooManyFrags uint64 `json:"reasm_too_many_frags"`
	ReasmTableFull    uint64 `json:"reasm_table_full"`
	ReasmMemFull      uint64 `json:"reasm_mem_full"`
	// ReasmTimeoutWithFirst: timeouts after fragment 0 arrived, which
	// call for ICMP Time Exceeded (the ICMP counters say if one went out).
	ReasmTimeoutWithFirst uint64 `json:"reasm_timeout_with_first"`

	// FragFailsDF: datagrams too big with DF set (the caller got
	// ErrWouldFragment; TCP should lower its MSS).
	FragFailsDF uint64 `json:"frag_fails_df"`
	// FragFailsNoMbuf: fragmentation stopped for lack of an mbuf.
	FragFailsNoMbuf uint64 `json:"frag_fails_no_mbuf"`
}

// CountError counts a parse or reassembly error by reason, into the
// aggregate counter and the reason counter.
func (s *Stats) CountError(err error) {
	e, _ := err.(Error)
	switch e {
	case ErrTruncated:
		s.InHdrErrors++
		s.RxTruncated++
	case ErrVersion:
		s.InHdrErrors++
		s.RxBadVersion++
	case ErrHeaderLen:
		s.InHdrErrors++
		s.RxBadHeaderLen++
	case ErrTotalLen:
		s.InHdrErrors++
		s.RxBadTotalLen++
	case ErrChecksum:
		s.InHdrErrors++
		s.RxBadChecksum++
	case ErrFragLength:
		s.InHdrErrors++
		s.RxBadFragLength++
	case ErrFragTooLong:
		s.InHdrErrors++
		s.RxFragTooLong++
	case ErrReasmOverlap:
		s.ReasmFails++
		s.ReasmOverlaps++
	case ErrReasmDuplicate:
		s.ReasmDuplicates++
	case ErrReasmInconsistent:
		s.ReasmFails++
		s.ReasmInconsistent++
	case ErrReasmTooManyFrags:
		s.ReasmFails++
		s.ReasmTooManyFrags++
	case ErrReasmTableFull:
		s.ReasmFails++
		s.InDiscards++
		s.ReasmTableFull++
	case ErrReasmMemFull:
		s.ReasmFails++
		s.InDiscards++
		s.ReasmMemFull++
	default:
		s.InHdrErrors++
	}
}
