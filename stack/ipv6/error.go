package ipv6

// Error is the reason a packet or fragment was dropped. Values compare
// with == and converting one to error does not allocate.
type Error uint8

// Reasons a packet is dropped on input. The comment of each says which
// RFC 4293 counter it adds to (see Stats.CountError) and the ICMPv6 error
// that goes with it, if any.
const (
	// ErrShort: shorter than the 40-byte fixed header (InHdrErrors).
	ErrShort Error = iota + 1
	// ErrVersion: the version field is not 6 (InHdrErrors).
	ErrVersion
	// ErrTruncated: the payload length runs past the frame
	// (InTruncatedPkts).
	ErrTruncated
	// ErrSrcMulticast: a multicast source address, which RFC 4291
	// section 2.7 forbids (InAddrErrors).
	ErrSrcMulticast
	// ErrExtTruncated: an extension header runs past the payload
	// (InHdrErrors; Linux drops these without an ICMPv6 error).
	ErrExtTruncated
	// ErrHopByHopNotFirst: a hop-by-hop options header (next header 0)
	// anywhere but right after the fixed header (RFC 8200 section 4.1;
	// InUnknownProtos, as Linux counts it; Parameter Problem code 1).
	ErrHopByHopNotFirst
	// ErrBadOption: an option runs past its header (InHdrErrors).
	ErrBadOption
	// ErrUnknownOption: an unrecognised option whose type's high-order
	// bits say discard (RFC 8200 section 4.2; InHdrErrors; Parameter
	// Problem code 2 for 10, and for 11 unless the destination is
	// multicast).
	ErrUnknownOption
	// ErrTooManyOptions: more non-padding options in one header than the
	// configured limit (Linux's net.ipv6.max_dst_opts_number and
	// max_hbh_opts_number, 8; InHdrErrors).
	ErrTooManyOptions
	// ErrRoutingType: a routing header of a type this host does not
	// process with segments left (RFC 8200 section 4.4; RFC 5095 makes
	// type 0 one of them; InHdrErrors; Parameter Problem code 0 at the
	// routing type).
	ErrRoutingType
	// ErrNoNextHeader: next header 59, nothing follows (RFC 8200 section
	// 4.7). Not an error, but the packet is consumed without delivery.
	ErrNoNextHeader
	// ErrUnknownNextHeader: an upper-layer protocol with no handler
	// (InUnknownProtos; Parameter Problem code 1).
	ErrUnknownNextHeader

	// Fragment header errors (RFC 8200 section 4.5).

	// ErrFragLength: M set and a fragment length not a multiple of 8
	// (InHdrErrors; Parameter Problem code 0 at the payload length).
	ErrFragLength
	// ErrFragTooLong: the packet reassembled from this fragment would be
	// longer than 65535 bytes (InHdrErrors; Parameter Problem code 0 at
	// the fragment offset).
	ErrFragTooLong
	// ErrFragEmpty: a fragment that carries no data; RFC 8200 does not
	// define one, and it could only waste a reassembly slot
	// (InHdrErrors).
	ErrFragEmpty
	// ErrIncompleteChain: a first fragment that does not hold the header
	// chain up to and including the upper-layer header (RFC 7112 section
	// 5, RFC 8200 section 4.5; InHdrErrors; Parameter Problem code 3,
	// pointer 0).
	ErrIncompleteChain
	// ErrNestedFragment: a second fragment header in one packet, which
	// fragmentation at the source cannot produce (RFC 8200 section 4.5;
	// InHdrErrors).
	ErrNestedFragment

	// Reassembly drops (the fragment was valid on its own); each adds to
	// ReasmFails unless said otherwise.

	// ErrReasmOverlap: the fragment overlaps data already held; the
	// datagram and all its later fragments are discarded (RFC 5722
	// section 4).
	ErrReasmOverlap
	// ErrReasmDiscarded: a fragment of a datagram already discarded for
	// an overlap (RFC 5722 section 4: "including those not yet
	// received"). Counted by reason only: the datagram's failure was
	// counted once.
	ErrReasmDiscarded
	// ErrReasmDuplicate: an exact copy of a fragment already held,
	// ignored as RFC 8200 section 4.5 allows. Not a failure.
	ErrReasmDuplicate
	// ErrReasmInconsistent: fragments disagree on where the datagram
	// ends.
	ErrReasmInconsistent
	// ErrReasmTooManyFrags: more fragments than a datagram may have.
	ErrReasmTooManyFrags
	// ErrReasmTooLong: the first fragment's headers and the data make a
	// payload longer than 65535 bytes, or the headers before its fragment
	// header are longer than MinMTU.
	ErrReasmTooLong
	// ErrReasmTableFull: no free reassembly slot for a new datagram
	// (also InDiscards).
	ErrReasmTableFull
	// ErrReasmMemFull: buffering the fragment would exceed the byte
	// budget (also InDiscards).
	ErrReasmMemFull
)

// Error implements error.
func (e Error) Error() string { return "ipv6: " + e.Name() }

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrShort:
		return "short"
	case ErrVersion:
		return "bad_version"
	case ErrTruncated:
		return "truncated"
	case ErrSrcMulticast:
		return "src_multicast"
	case ErrExtTruncated:
		return "ext_truncated"
	case ErrHopByHopNotFirst:
		return "hop_by_hop_not_first"
	case ErrBadOption:
		return "bad_option"
	case ErrUnknownOption:
		return "unknown_option"
	case ErrTooManyOptions:
		return "too_many_options"
	case ErrRoutingType:
		return "bad_routing_type"
	case ErrNoNextHeader:
		return "no_next_header"
	case ErrUnknownNextHeader:
		return "unknown_next_header"
	case ErrFragLength:
		return "bad_frag_length"
	case ErrFragTooLong:
		return "frag_too_long"
	case ErrFragEmpty:
		return "frag_empty"
	case ErrIncompleteChain:
		return "incomplete_chain"
	case ErrNestedFragment:
		return "nested_fragment"
	case ErrReasmOverlap:
		return "reasm_overlap"
	case ErrReasmDiscarded:
		return "reasm_discarded"
	case ErrReasmDuplicate:
		return "reasm_duplicate"
	case ErrReasmInconsistent:
		return "reasm_inconsistent"
	case ErrReasmTooManyFrags:
		return "reasm_too_many_frags"
	case ErrReasmTooLong:
		return "reasm_too_long"
	case ErrReasmTableFull:
		return "reasm_table_full"
	case ErrReasmMemFull:
		return "reasm_mem_full"
	case ErrMTU:
		return "mtu_below_minimum"
	case ErrTooLong:
		return "too_long"
	}
	return "unknown"
}

// Output errors.
const (
	// ErrMTU: fragmentation asked for an MTU below the 1280 bytes every
	// IPv6 link has (RFC 8200 section 5).
	ErrMTU Error = iota + 64
	// ErrTooLong: a payload that cannot be carried in a packet of at most
	// 65535 payload bytes, fragment header included.
	ErrTooLong
)
