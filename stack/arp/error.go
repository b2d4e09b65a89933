package arp

// Error is the reason an ARP packet failed to parse. Values compare with
// == and converting one to error does not allocate.
type Error uint8

// Reasons an ARP packet is rejected.
const (
	// ErrTruncated: shorter than the 28 bytes of IPv4-over-Ethernet ARP.
	ErrTruncated Error = iota + 1
	// ErrHardwareType: hardware type is not Ethernet (1) or its length
	// is not 6.
	ErrHardwareType
	// ErrProtocolType: protocol type is not IPv4 (0x0800) or its length
	// is not 4.
	ErrProtocolType
	// ErrOperation: operation is neither request (1) nor reply (2).
	ErrOperation
	// ErrSenderAddr: the sender hardware address is a group address,
	// which no host has (RFC 1812 section 3.3.2 rejects such mappings).
	ErrSenderAddr
)

// Error implements error.
func (e Error) Error() string { return "arp: " + e.Name() }

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrTruncated:
		return "truncated"
	case ErrHardwareType:
		return "bad_hardware_type"
	case ErrProtocolType:
		return "bad_protocol_type"
	case ErrOperation:
		return "bad_operation"
	case ErrSenderAddr:
		return "bad_sender_addr"
	}
	return "unknown"
}
