package iface

// Error is why an output call failed. Values compare with == and
// converting one to error does not allocate.
type Error uint8

// Output and socket errors.
const (
	// ErrNoRoute: the destination is off-link and there is no gateway,
	// or it is our own address (no loopback).
	ErrNoRoute Error = iota + 1
	// ErrMessageTooLong: larger than the MTU with DontFrag set (EMSGSIZE),
	// or larger than an IPv4 datagram can be.
	ErrMessageTooLong
	// ErrNoMbuf: the pool had no mbuf.
	ErrNoMbuf
	// ErrNoHeadroom: the mbuf has less headroom than HeaderRoom.
	ErrNoHeadroom
	// ErrChained: multi-segment mbufs are not supported on output.
	ErrChained
	// ErrPortInUse: the UDP port is bound already.
	ErrPortInUse
	// ErrNoPorts: no ephemeral port is free.
	ErrNoPorts
	// ErrClosed: the socket is closed.
	ErrClosed
	// ErrProtocolTaken: a handler is registered for the protocol already,
	// or the protocol is served by the interface itself (ICMP, UDP).
	ErrProtocolTaken
	// ErrBadAddress: the destination cannot be sent to (unspecified,
	// multicast, loopback).
	ErrBadAddress
	// ErrLoanEnded: SendLent was given a token that names no open loan
	// (its buffer was sent already, taken back by a later Lend, or never
	// lent), or a length beyond the loan: nothing is sent.
	ErrLoanEnded
	// ErrNoSource: no IPv6 address to send from is assigned yet
	// (Duplicate Address Detection is running or found a duplicate).
	ErrNoSource
)

// Error implements error.
func (e Error) Error() string { return "iface: " + e.Name() }

// Name is a short snake_case key for the reason.
func (e Error) Name() string {
	switch e {
	case ErrNoRoute:
		return "no_route"
	case ErrMessageTooLong:
		return "message_too_long"
	case ErrNoMbuf:
		return "no_mbuf"
	case ErrNoHeadroom:
		return "no_headroom"
	case ErrChained:
		return "chained_mbuf"
	case ErrPortInUse:
		return "port_in_use"
	case ErrNoPorts:
		return "no_ephemeral_ports"
	case ErrClosed:
		return "closed"
	case ErrProtocolTaken:
		return "protocol_taken"
	case ErrBadAddress:
		return "bad_address"
	case ErrNoSource:
		return "no_source"
	case ErrLoanEnded:
		return "loan_ended"
	}
	return "unknown"
}
