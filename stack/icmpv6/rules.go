package icmpv6

import (
	"time"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Suppress is why an ICMPv6 error is not sent; zero means it may be.
type Suppress uint8

// Reasons an error is not sent.
const (
	// Allowed: the error may be sent.
	Allowed Suppress = iota
	// SuppressAboutError: the invoking packet is an ICMPv6 error or a
	// Redirect, or too short to tell (RFC 4443 section 2.4 (e.1), (e.2)).
	SuppressAboutError
	// SuppressMulticast: the invoking packet went to a multicast address
	// or arrived as a link-layer multicast or broadcast, and the error is
	// neither Packet Too Big nor Parameter Problem code 2 (RFC 4443
	// section 2.4 (e.3) to (e.5)).
	SuppressMulticast
	// SuppressSource: the invoking packet's source does not identify a
	// single node: unspecified or multicast (RFC 4443 section 2.4 (e.6)).
	SuppressSource
	// SuppressRateLimited: the rate limiter's bucket was empty (RFC 4443
	// section 2.4 (f)).
	SuppressRateLimited
)

// Name is a short snake_case key for statistics.
func (s Suppress) Name() string {
	switch s {
	case Allowed:
		return "allowed"
	case SuppressAboutError:
		return "about_error"
	case SuppressMulticast:
		return "multicast"
	case SuppressSource:
		return "source"
	case SuppressRateLimited:
		return "rate_limited"
	}
	return "unknown"
}

// ErrorAllowed applies RFC 4443 section 2.4 (e) to an error of type t and
// code about the invoking packet inv (from its IPv6 header, at least
// ipv6.HeaderLen bytes). linkMulticast says the frame that carried it was
// sent to a link-layer multicast or broadcast address.
func ErrorAllowed(inv []byte, t Type, code uint8, linkMulticast bool) Suppress {
	if len(inv) < ipv6.HeaderLen {
		return SuppressAboutError
	}
	p := ipv6.Packet(inv)
	if src := p.Src(); src.IsUnspecified() || src.IsMulticast() {
		return SuppressSource
	}
	if linkMulticast || p.Dst().IsMulticast() {
		// (e.3)-(e.5): the two exceptions exist so that path MTU
		// discovery works for multicast and so that a node can learn
		// its multicast packets carry an option the receivers refuse.
		if t != TypePacketTooBig && !(t == TypeParamProblem && code == CodeUnknownOption) {
			return SuppressMulticast
		}
	}
	proto, off, ok := ipv6.UpperLayer(inv)
	if proto == ipv6.NextICMPv6 {
		if !ok || off >= len(inv) {
			// The type is cut off: assume the worst, as never sending
			// an error about an error is the rule that stops storms.
			return SuppressAboutError
		}
		if it := Type(inv[off]); it.IsError() || it == TypeRedirect {
			return SuppressAboutError
		}
	}
	return Allowed
}

// QuoteLen returns how much of the invoking packet inv an error carries:
// as much as fits without the error exceeding the minimum IPv6 MTU (RFC
// 4443 section 2.4 (c)).
func QuoteLen(inv []byte) int { return min(len(inv), ipv6.MaxQuoteLen) }

// ErrorPacketLen returns the length of the IPv6 packet carrying an error
// about inv: at most ipv6.MinMTU.
func ErrorPacketLen(inv []byte) int { return ipv6.HeaderLen + MinLen + QuoteLen(inv) }

// ErrorSource returns the source address of an error about inv (RFC 4443
// section 2.2): inv's destination if it was one of the node's unicast
// addresses, else local, a unicast address of the interface it arrived
// on. The caller knows which of its addresses are anycast and passes one
// of those as local too.
func ErrorSource(inv ipv6.Packet, local ipv6.Addr) ipv6.Addr {
	if d := inv.Dst(); !d.IsMulticast() && !d.IsUnspecified() {
		return d
	}
	return local
}

// ErrorRequest is an error to send about a received packet.
type ErrorRequest struct {
	Type Type
	Code uint8
	// Param is the MTU of Packet Too Big or the pointer of Parameter
	// Problem; unused (zero on the wire) otherwise.
	Param uint32
	// Invoking is the packet the error is about, from its IPv6 header.
	Invoking []byte
	// LinkMulticast: it arrived as a link-layer multicast or broadcast.
	LinkMulticast bool
	// Local is the interface's unicast address, the source when the
	// invoking packet's destination was not a unicast address of ours.
	Local ipv6.Addr
	// HopLimit of the error packet; zero means ipv6.DefaultHopLimit.
	HopLimit uint8
}

// RequestFor returns the request for the error IPv6 input asked for about
// res.Packet (ipv6.Result.ICMP), or false if none is due.
func RequestFor(res ipv6.Result, linkMulticast bool, local ipv6.Addr) (ErrorRequest, bool) {
	if res.ICMP.IsZero() || len(res.Packet) < ipv6.HeaderLen {
		return ErrorRequest{}, false
	}
	return ErrorRequest{
		Type: Type(res.ICMP.Type), Code: res.ICMP.Code, Param: res.ICMP.Pointer,
		Invoking: res.Packet, LinkMulticast: linkMulticast, Local: local,
	}, true
}

// Errors decides whether an ICMPv6 error goes out and builds it: the rules
// of RFC 4443 section 2.4 (e), then the rate limit of section 2.4 (f).
type Errors struct {
	limiter *Limiter
	stats   *Stats
}

// NewErrors returns an error originator drawing from limiter (nil for no
// limit) and counting into stats (nil for private counters).
func NewErrors(limiter *Limiter, stats *Stats) *Errors {
	if stats == nil {
		stats = &Stats{}
	}
	return &Errors{limiter: limiter, stats: stats}
}

// Stats returns the counters.
func (e *Errors) Stats() *Stats { return e.stats }

// Build writes, at now, the IPv6 packet carrying the error req asks for
// into out (at least ErrorPacketLen(req.Invoking) bytes) and returns its
// length, or 0 and why it must not be sent. Every outcome is counted; the
// caller counts OutDropped if it then cannot send it.
func (e *Errors) Build(now time.Duration, req ErrorRequest, out []byte) (int, Suppress) {
	if s := ErrorAllowed(req.Invoking, req.Type, req.Code, req.LinkMulticast); s != Allowed {
		e.stats.CountSuppress(s)
		return 0, s
	}
	if e.limiter != nil && !e.limiter.Allow(now) {
		e.stats.CountSuppress(SuppressRateLimited)
		return 0, SuppressRateLimited
	}
	n := EmitError(out, req)
	e.stats.CountOut(req.Type)
	return n, Allowed
}

// EmitError writes the IPv6 packet carrying the error req into out (at
// least ErrorPacketLen(req.Invoking) bytes), without applying any rule,
// and returns its length.
func EmitError(out []byte, req ErrorRequest) int {
	inv := ipv6.Packet(req.Invoking)
	src, dst := ErrorSource(inv, req.Local), inv.Src()
	r := Repr{Type: req.Type, Code: req.Code, Data: req.Invoking[:QuoteLen(req.Invoking)]}
	switch req.Type {
	case TypePacketTooBig:
		r.MTU = req.Param
	case TypeParamProblem:
		r.Pointer = req.Param
	}
	hl := req.HopLimit
	if hl == 0 {
		hl = ipv6.DefaultHopLimit
	}
	h := ipv6.Repr{Src: src, Dst: dst, NextHeader: NextHeader, PayloadLen: r.BufferLen(), HopLimit: hl}
	h.Emit(ipv6.Packet(out))
	r.Emit(out[ipv6.HeaderLen:], src, dst)
	return ipv6.HeaderLen + r.BufferLen()
}
