package ether

// Error is the reason a frame failed to parse. Its values are comparable
// with == and errors.Is, and converting one to error does not allocate.
type Error uint8

// Reasons a frame is rejected.
const (
	// ErrTruncated: shorter than the header (14 bytes, 18 with a tag).
	ErrTruncated Error = iota + 1
	// ErrStackedVLAN: more than one 802.1Q/802.1ad tag.
	ErrStackedVLAN
	// ErrLengthField: the type/length field is an IEEE 802.3 length
	// (below 0x0600), an LLC frame this stack does not speak.
	ErrLengthField
)

// Error implements error.
func (e Error) Error() string {
	switch e {
	case ErrTruncated:
		return "ethernet: frame truncated"
	case ErrStackedVLAN:
		return "ethernet: stacked VLAN tags"
	case ErrLengthField:
		return "ethernet: 802.3 length field instead of an EtherType"
	}
	return "ethernet: unknown error"
}

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrTruncated:
		return "truncated"
	case ErrStackedVLAN:
		return "stacked_vlan"
	case ErrLengthField:
		return "length_field"
	}
	return "unknown"
}
