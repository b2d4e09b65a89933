package icmpv6

// Error is the reason an ICMPv6 message failed to parse. Values compare
// with == and converting one to error does not allocate.
type Error uint8

// Reasons a message is rejected.
const (
	// ErrTruncated: shorter than the 8 bytes every RFC 4443 message has.
	ErrTruncated Error = iota + 1
	// ErrChecksum: the checksum over the pseudo-header and the message
	// does not verify (RFC 4443 section 2.3).
	ErrChecksum
	// ErrBadQuote: an error message whose invoking packet is not an IPv6
	// header (RFC 4443 section 2.4 (c) asks for as much of it as fits),
	// so it cannot be matched to a flow.
	ErrBadQuote
)

// Error implements error.
func (e Error) Error() string { return "icmpv6: " + e.Name() }

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrTruncated:
		return "truncated"
	case ErrChecksum:
		return "bad_checksum"
	case ErrBadQuote:
		return "bad_quote"
	}
	return "unknown"
}
