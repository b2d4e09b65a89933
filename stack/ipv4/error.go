package ipv4

// Error is the reason a datagram was rejected by Parse or dropped by the
// reassembler. Values compare with == and converting one to error does
// not allocate.
type Error uint8

// Reasons a datagram or fragment is rejected.
const (
	// ErrTruncated: shorter than 20 bytes, than its IHL or than its
	// total length.
	ErrTruncated Error = iota + 1
	// ErrVersion: the version field is not 4.
	ErrVersion
	// ErrHeaderLen: IHL below 5.
	ErrHeaderLen
	// ErrTotalLen: total length below the header length.
	ErrTotalLen
	// ErrChecksum: the header checksum does not verify.
	ErrChecksum
	// ErrFragLength: a fragment that is empty, or not the last and not a
	// multiple of 8 bytes long (RFC 791 section 3.2).
	ErrFragLength
	// ErrFragTooLong: offset plus length exceeds the 65535-byte datagram
	// limit (the "ping of death").
	ErrFragTooLong

	// Reassembly drops (the fragment was valid on its own).

	// ErrReasmOverlap: the fragment overlaps data already held; the
	// datagram is dropped.
	ErrReasmOverlap
	// ErrReasmDuplicate: an exact copy of a fragment already held;
	// ignored.
	ErrReasmDuplicate
	// ErrReasmInconsistent: fragments disagree on where the datagram
	// ends; the datagram is dropped.
	ErrReasmInconsistent
	// ErrReasmTooManyFrags: more fragments than a datagram may have; the
	// datagram is dropped.
	ErrReasmTooManyFrags
	// ErrReasmTableFull: no free reassembly slot for a new datagram.
	ErrReasmTableFull
	// ErrReasmMemFull: buffering the fragment would exceed the byte
	// budget.
	ErrReasmMemFull
)

// Error implements error.
func (e Error) Error() string { return "ipv4: " + e.Name() }

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrTruncated:
		return "truncated"
	case ErrVersion:
		return "bad_version"
	case ErrHeaderLen:
		return "bad_header_len"
	case ErrTotalLen:
		return "bad_total_len"
	case ErrChecksum:
		return "bad_checksum"
	case ErrFragLength:
		return "bad_frag_length"
	case ErrFragTooLong:
		return "frag_too_long"
	case ErrReasmOverlap:
		return "reasm_overlap"
	case ErrReasmDuplicate:
		return "reasm_duplicate"
	case ErrReasmInconsistent:
		return "reasm_inconsistent"
	case ErrReasmTooManyFrags:
		return "reasm_too_many_frags"
	case ErrReasmTableFull:
		return "reasm_table_full"
	case ErrReasmMemFull:
		return "reasm_mem_full"
	}
	return "unknown"
}
