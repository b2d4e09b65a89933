package ipv6

// Stats are the IPv6 counters of one stack instance, named after the
// ipSystemStats objects of RFC 4293 (the Ip6 lines of Linux's
// /proc/net/snmp6), plus the reasons behind the aggregate drop counters.
type Stats struct {
	// InReceives: packets handed to IPv6 input, errors included.
	InReceives uint64 `json:"in_receives"`
	// InHdrErrors: packets dropped for a bad header or extension header.
	InHdrErrors uint64 `json:"in_hdr_errors"`
	// InAddrErrors: packets with an impossible address.
	InAddrErrors uint64 `json:"in_addr_errors"`
	// InUnknownProtos: packets for an upper-layer protocol with no
	// handler, or with a hop-by-hop header out of place.
	InUnknownProtos uint64 `json:"in_unknown_protos"`
	// InTruncatedPkts: packets whose frame holds less than their payload
	// length says.
	InTruncatedPkts uint64 `json:"in_truncated_pkts"`
	// InDiscards: packets dropped for lack of resources (reassembly table
	// or byte budget full).
	InDiscards uint64 `json:"in_discards"`
	// InDelivers: packets handed to an upper-layer protocol.
	InDelivers uint64 `json:"in_delivers"`
	// InMcastPkts: multicast packets received.
	InMcastPkts uint64 `json:"in_mcast_pkts"`
	// InNoNextHeader: packets that ended in next header 59 (RFC 8200
	// section 4.7): consumed, not an error.
	InNoNextHeader uint64 `json:"in_no_next_header"`
	// InAtomicFragments: packets with a fragment header of offset 0 and M
	// clear, processed in isolation (RFC 6946 section 4).
	InAtomicFragments uint64 `json:"in_atomic_fragments"`

	// The packets the upper layers ask IPv6 to send are counted where
	// they are sent, in stack/iface's Out6Stats.Requests (ipv6_out).

	// OutFragReqds: packets that needed fragmenting.
	OutFragReqds uint64 `json:"out_frag_reqds"`
	// OutFragOKs: packets fragmented.
	OutFragOKs uint64 `json:"out_frag_oks"`
	// OutFragFails: packets that needed fragmenting and could not be.
	OutFragFails uint64 `json:"out_frag_fails"`
	// OutFragCreates: fragments generated.
	OutFragCreates uint64 `json:"out_frag_creates"`

	// ReasmReqds: fragments received that needed reassembly.
	ReasmReqds uint64 `json:"reasm_reqds"`
	// ReasmOKs: packets reassembled.
	ReasmOKs uint64 `json:"reasm_oks"`
	// ReasmFails: failures of reassembly (datagrams given up on, any
	// reason below but duplicates and discards after an overlap).
	ReasmFails uint64 `json:"reasm_fails"`
	// ReasmTimeout: datagrams given up after the reassembly timeout.
	ReasmTimeout uint64 `json:"reasm_timeout"`
	// ReasmTimeoutWithFirst: timeouts after the first fragment arrived,
	// which call for Time Exceeded code 1 (RFC 8200 section 4.5).
	ReasmTimeoutWithFirst uint64 `json:"reasm_timeout_with_first"`

	// Drops by reason (Error.Name in snake case after "rx_").
	RxShort             uint64 `json:"rx_short"`
	RxBadVersion        uint64 `json:"rx_bad_version"`
	RxTruncated         uint64 `json:"rx_truncated"`
	RxSrcMulticast      uint64 `json:"rx_src_multicast"`
	RxExtTruncated      uint64 `json:"rx_ext_truncated"`
	RxHopByHopNotFirst  uint64 `json:"rx_hop_by_hop_not_first"`
	RxBadOption         uint64 `json:"rx_bad_option"`
	RxUnknownOption     uint64 `json:"rx_unknown_option"`
	RxTooManyOptions    uint64 `json:"rx_too_many_options"`
	RxBadRoutingType    uint64 `json:"rx_bad_routing_type"`
	RxUnknownNextHeader uint64 `json:"rx_unknown_next_header"`
	RxBadFragLength     uint64 `json:"rx_bad_frag_length"`
	RxFragTooLong       uint64 `json:"rx_frag_too_long"`
	RxFragEmpty         uint64 `json:"rx_frag_empty"`
	RxIncompleteChain   uint64 `json:"rx_incomplete_chain"`
	RxNestedFragment    uint64 `json:"rx_nested_fragment"`

	// Reassembly drops by reason.
	ReasmOverlaps     uint64 `json:"reasm_overlaps"`
	ReasmDiscarded    uint64 `json:"reasm_discarded"`
	ReasmDuplicates   uint64 `json:"reasm_duplicates"`
	ReasmInconsistent uint64 `json:"reasm_inconsistent"`
	ReasmTooManyFrags uint64 `json:"reasm_too_many_frags"`
	ReasmTooLong      uint64 `json:"reasm_too_long"`
	ReasmTableFull    uint64 `json:"reasm_table_full"`
	ReasmMemFull      uint64 `json:"reasm_mem_full"`
}

// CountError counts a drop by reason, into the aggregate counter and the
// reason counter.
func (s *Stats) CountError(err error) {
	e, _ := err.(Error)
	switch e {
	case ErrShort:
		s.InHdrErrors++
		s.RxShort++
	case ErrVersion:
		s.InHdrErrors++
		s.RxBadVersion++
	case ErrTruncated:
		s.InTruncatedPkts++
		s.RxTruncated++
	case ErrSrcMulticast:
		s.InAddrErrors++
		s.RxSrcMulticast++
	case ErrExtTruncated:
		s.InHdrErrors++
		s.RxExtTruncated++
	case ErrHopByHopNotFirst:
		s.InUnknownProtos++
		s.RxHopByHopNotFirst++
	case ErrBadOption:
		s.InHdrErrors++
		s.RxBadOption++
	case ErrUnknownOption:
		s.InHdrErrors++
		s.RxUnknownOption++
	case ErrTooManyOptions:
		s.InHdrErrors++
		s.RxTooManyOptions++
	case ErrRoutingType:
		s.InHdrErrors++
		s.RxBadRoutingType++
	case ErrNoNextHeader:
		s.InNoNextHeader++
	case ErrUnknownNextHeader:
		s.InUnknownProtos++
		s.RxUnknownNextHeader++
	case ErrFragLength:
		s.InHdrErrors++
		s.RxBadFragLength++
	case ErrFragTooLong:
		s.InHdrErrors++
		s.RxFragTooLong++
	case ErrFragEmpty:
		s.InHdrErrors++
		s.RxFragEmpty++
	case ErrIncompleteChain:
		s.InHdrErrors++
		s.RxIncompleteChain++
	case ErrNestedFragment:
		s.InHdrErrors++
		s.RxNestedFragment++
	case ErrReasmOverlap:
		s.ReasmFails++
		s.ReasmOverlaps++
	case ErrReasmDiscarded:
		s.ReasmDiscarded++
	case ErrReasmDuplicate:
		s.ReasmDuplicates++
	case ErrReasmInconsistent:
		s.ReasmFails++
		s.ReasmInconsistent++
	case ErrReasmTooManyFrags:
		s.ReasmFails++
		s.ReasmTooManyFrags++
	case ErrReasmTooLong:
		s.ReasmFails++
		s.ReasmTooLong++
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
