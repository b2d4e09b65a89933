package icmp

// Error is the reason an ICMP message failed to parse. Values compare
// with == and converting one to error does not allocate.
type Error uint8

// Reasons a message is rejected.
const (
	// ErrTruncated: shorter than the 8-byte header.
	ErrTruncated Error = iota + 1
	// ErrChecksum: the checksum over the message does not verify.
	ErrChecksum
	// ErrBadQuote: an error message whose quoted datagram is not an IPv4
	// header followed by 8 bytes (RFC 792), so it cannot be matched to a
	// connection.
	ErrBadQuote
)

// Error implements error.
func (e Error) Error() string { return "icmp: " + e.Name() }

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
