package udp

// Error is the reason a UDP datagram failed to parse. Values compare with
// == and converting one to error does not allocate.
type Error uint8

// Reasons a datagram is rejected.
const (
	// ErrTruncated: shorter than the 8-byte header or than its length
	// field.
	ErrTruncated Error = iota + 1
	// ErrLength: the length field is below 8.
	ErrLength
	// ErrChecksum: a non-zero checksum does not verify.
	ErrChecksum
)

// Error implements error.
func (e Error) Error() string { return "udp: " + e.Name() }

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrTruncated:
		return "truncated"
	case ErrLength:
		return "bad_length"
	case ErrChecksum:
		return "bad_checksum"
	}
	return "unknown"
}
