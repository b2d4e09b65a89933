package icmp

import (
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// Suppress is why an ICMP error must not be sent about a datagram (RFC
// 1122 section 3.2.2); zero means it may be sent.
type Suppress uint8

// Reasons an error is not sent.
const (
	// Allowed: the error may be sent.
	Allowed Suppress = iota
	// SuppressAboutError: the datagram is itself an ICMP error (or too
	// short to tell).
	SuppressAboutError
	// SuppressBroadcast: the datagram went to an IP broadcast or
	// multicast address, or arrived as a link-layer broadcast.
	SuppressBroadcast
	// SuppressFragment: the datagram is a non-initial fragment.
	SuppressFragment
	// SuppressSource: its source does not define a single host (zero,
	// loopback, broadcast, multicast, class E).
	SuppressSource
)

// Name is a short snake_case key for statistics.
func (s Suppress) Name() string {
	switch s {
	case Allowed:
		return "allowed"
	case SuppressAboutError:
		return "about_error"
	case SuppressBroadcast:
		return "broadcast"
	case SuppressFragment:
		return "fragment"
	case SuppressSource:
		return "source"
	}
	return "unknown"
}

// ErrorAllowed applies RFC 1122 section 3.2.2 to the offending datagram
// orig (a checked IPv4 packet): no error about an ICMP error, about a
// datagram sent to a broadcast or multicast address (IP or link layer),
// about a non-initial fragment, or to a source that is not one host.
// dstBroadcast says orig's destination is a broadcast address of the
// receiving interface (limited or directed); linkBroadcast says the
// frame was sent to a link-layer broadcast or multicast address.
func ErrorAllowed(orig ipv4.Packet, linkBroadcast, dstBroadcast bool) Suppress {
	if linkBroadcast || dstBroadcast || ipv4.IsMulticast(orig.Dst()) || ipv4.IsLimitedBroadcast(orig.Dst()) {
		return SuppressBroadcast
	}
	if orig.FragOffset() != 0 {
		return SuppressFragment
	}
	src := orig.Src()
	if ipv4.IsUnspecified(src) || ipv4.IsLoopback(src) || ipv4.IsMulticast(src) ||
		ipv4.IsLimitedBroadcast(src) || ipv4.IsReserved(src) {
		return SuppressSource
	}
	if orig.Protocol() == ipv4.ProtoICMP {
		pl := orig[orig.HeaderLen():]
		if len(pl) < 1 || Type(pl[0]).IsError() {
			return SuppressAboutError
		}
		// Unknown types are treated as errors, as RFC 1812 section
		// 4.3.2.7 does for safety.
		switch Type(pl[0]) {
		case TypeEchoReply, TypeEchoRequest, TypeTimestamp, TypeTimestampReply:
		default:
			if pl[0] > uint8(TypeTimestampReply) {
				return SuppressAboutError
			}
		}
	}
	return Allowed
}

// QuoteOf returns the part of orig an error quotes: its header and the
// first QuoteLen bytes of its payload (fewer if it has fewer). orig must
// be a checked packet; the result is a view into it.
func QuoteOf(orig ipv4.Packet) []byte {
	n := orig.HeaderLen() + QuoteLen
	if n > len(orig) {
		n = len(orig)
	}
	return orig[:n]
}

// ErrorLen returns the length of an error message quoting quote.
func ErrorLen(quote []byte) int { return HeaderLen + len(quote) }

// EmitError writes an error message of type t and code into p (at least
// ErrorLen(quote) bytes) quoting quote, with arg the type's extra field:
// the next-hop MTU for fragmentation needed, the pointer for parameter
// problem, unused otherwise. It returns the length written.
func EmitError(p Packet, t Type, code uint8, arg uint16, quote []byte) int {
	r := Repr{Type: t, Code: code, Data: quote}
	switch t {
	case TypeDestUnreach:
		r.MTU = arg
	case TypeParamProblem:
		r.Pointer = uint8(arg)
	}
	r.Emit(p)
	return r.BufferLen()
}
