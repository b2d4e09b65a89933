package ndp

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Fixed lengths of the messages of RFC 4861 section 4, before options:
// the minimum "ICMP length (derived from the IP length)" of sections
// 6.1.1, 6.1.2, 7.1.1, 7.1.2 and 8.1.
const (
	RouterSolicitLen   = 8
	RouterAdvertLen    = 16
	NeighborSolicitLen = 24
	NeighborAdvertLen  = 24
	RedirectLen        = 40
)

// HopLimit is the IP Hop Limit every ND message is sent with, and the
// only one a receiver accepts (RFC 4861 sections 6.1, 7.1, 8.1): a
// message from off the link arrives with less.
const HopLimit = 255

// Flag bits of the Router Advertisement (RFC 4861 section 4.2).
const (
	raManaged = 0x80
	raOther   = 0x40
)

// Flag bits of the Neighbor Advertisement (RFC 4861 section 4.4).
const (
	naRouter    = 0x80
	naSolicited = 0x40
	naOverride  = 0x20
)

// RouterAdvertMsg is a zero-copy view of a Router Advertisement (RFC 4861
// section 4.2). Accessors assume RouterAdvertLen bytes.
type RouterAdvertMsg []byte

// CurHopLimit returns Cur Hop Limit (0: unspecified by this router).
func (m RouterAdvertMsg) CurHopLimit() uint8 { return m[4] }

// Managed returns the M flag.
func (m RouterAdvertMsg) Managed() bool { return m[5]&raManaged != 0 }

// Other returns the O flag.
func (m RouterAdvertMsg) Other() bool { return m[5]&raOther != 0 }

// RouterLifetime returns Router Lifetime in seconds.
func (m RouterAdvertMsg) RouterLifetime() uint16 { return binary.BigEndian.Uint16(m[6:8]) }

// ReachableTime returns Reachable Time in milliseconds.
func (m RouterAdvertMsg) ReachableTime() uint32 { return binary.BigEndian.Uint32(m[8:12]) }

// RetransTimer returns Retrans Timer in milliseconds.
func (m RouterAdvertMsg) RetransTimer() uint32 { return binary.BigEndian.Uint32(m[12:16]) }

// NeighborMsg is a zero-copy view of a Neighbor Solicitation or
// Advertisement, which share a layout (RFC 4861 sections 4.3, 4.4).
// Accessors assume NeighborSolicitLen bytes.
type NeighborMsg []byte

// Router returns the R flag (advertisements).
func (m NeighborMsg) Router() bool { return m[4]&naRouter != 0 }

// Solicited returns the S flag (advertisements).
func (m NeighborMsg) Solicited() bool { return m[4]&naSolicited != 0 }

// Override returns the O flag (advertisements).
func (m NeighborMsg) Override() bool { return m[4]&naOverride != 0 }

// Target returns Target Address.
func (m NeighborMsg) Target() ipv6.Addr { return ipv6.Addr(m[8:24]) }

// RedirectMsg is a zero-copy view of a Redirect (RFC 4861 section 4.5).
// Accessors assume RedirectLen bytes.
type RedirectMsg []byte

// Target returns Target Address, the better first hop.
func (m RedirectMsg) Target() ipv6.Addr { return ipv6.Addr(m[8:24]) }

// Destination returns Destination Address, the redirected destination.
func (m RedirectMsg) Destination() ipv6.Addr { return ipv6.Addr(m[24:40]) }

// RouterSolicit is a parsed Router Solicitation (RFC 4861 section 4.1).
type RouterSolicit struct {
	Options Options
}

// RouterAdvert is a parsed Router Advertisement (RFC 4861 section 4.2).
type RouterAdvert struct {
	CurHopLimit    uint8
	Managed, Other bool
	// RouterLifetime is in seconds; 0: not a default router.
	RouterLifetime uint16
	// ReachableTime and RetransTimer are in milliseconds; 0:
	// unspecified by this router.
	ReachableTime uint32
	RetransTimer  uint32
	Options       Options
}

// NeighborSolicit is a parsed Neighbor Solicitation (RFC 4861 section
// 4.3).
type NeighborSolicit struct {
	Target  ipv6.Addr
	Options Options
}

// NeighborAdvert is a parsed Neighbor Advertisement (RFC 4861 section
// 4.4).
type NeighborAdvert struct {
	Router, Solicited, Override bool
	Target                      ipv6.Addr
	Options                     Options
}

// Redirect is a parsed Redirect (RFC 4861 section 4.5).
type Redirect struct {
	Target, Destination ipv6.Addr
	Options             Options
}

// header checks msg's type and its fixed length.
func header(msg []byte, t icmpv6.Type, fixed int) error {
	if len(msg) < fixed {
		return ErrTruncated
	}
	if icmpv6.Header(msg).Type() != t {
		return ErrType
	}
	return nil
}

// ParseRouterSolicit parses the ICMPv6 message msg (from its type byte).
func ParseRouterSolicit(msg []byte) (RouterSolicit, error) {
	var r RouterSolicit
	if err := header(msg, icmpv6.TypeRouterSolicitation, RouterSolicitLen); err != nil {
		return r, err
	}
	return r, parseOptions(msg[RouterSolicitLen:], &r.Options)
}

// ParseRouterAdvert parses the ICMPv6 message msg (from its type byte).
func ParseRouterAdvert(msg []byte) (RouterAdvert, error) {
	var r RouterAdvert
	if err := header(msg, icmpv6.TypeRouterAdvertisement, RouterAdvertLen); err != nil {
		return r, err
	}
	m := RouterAdvertMsg(msg)
	r = RouterAdvert{
		CurHopLimit: m.CurHopLimit(), Managed: m.Managed(), Other: m.Other(),
		RouterLifetime: m.RouterLifetime(), ReachableTime: m.ReachableTime(), RetransTimer: m.RetransTimer(),
	}
	return r, parseOptions(msg[RouterAdvertLen:], &r.Options)
}

// ParseNeighborSolicit parses the ICMPv6 message msg (from its type
// byte).
func ParseNeighborSolicit(msg []byte) (NeighborSolicit, error) {
	var r NeighborSolicit
	if err := header(msg, icmpv6.TypeNeighborSolicitation, NeighborSolicitLen); err != nil {
		return r, err
	}
	r.Target = NeighborMsg(msg).Target()
	return r, parseOptions(msg[NeighborSolicitLen:], &r.Options)
}

// ParseNeighborAdvert parses the ICMPv6 message msg (from its type byte).
func ParseNeighborAdvert(msg []byte) (NeighborAdvert, error) {
	var r NeighborAdvert
	if err := header(msg, icmpv6.TypeNeighborAdvertisement, NeighborAdvertLen); err != nil {
		return r, err
	}
	m := NeighborMsg(msg)
	r = NeighborAdvert{Router: m.Router(), Solicited: m.Solicited(), Override: m.Override(), Target: m.Target()}
	return r, parseOptions(msg[NeighborAdvertLen:], &r.Options)
}

// ParseRedirect parses the ICMPv6 message msg (from its type byte).
func ParseRedirect(msg []byte) (Redirect, error) {
	var r Redirect
	if err := header(msg, icmpv6.TypeRedirect, RedirectLen); err != nil {
		return r, err
	}
	m := RedirectMsg(msg)
	r = Redirect{Target: m.Target(), Destination: m.Destination()}
	return r, parseOptions(msg[RedirectLen:], &r.Options)
}

// start writes the type, a zero code and checksum and clears the fixed
// part of a message of fixed bytes.
func start(b []byte, t icmpv6.Type, fixed int) {
	clear(b[:fixed])
	icmpv6.Header(b).SetType(t)
}

// Len returns the message's length in bytes.
func (r *RouterSolicit) Len() int { return RouterSolicitLen + r.Options.len() }

// Emit writes the message sent from src to dst into b (Len bytes), its
// checksum filled in.
func (r *RouterSolicit) Emit(b []byte, src, dst ipv6.Addr) {
	start(b, icmpv6.TypeRouterSolicitation, RouterSolicitLen)
	r.Options.emit(b[RouterSolicitLen:])
	icmpv6.FillChecksum(src, dst, b[:r.Len()])
}

// Len returns the message's length in bytes.
func (r *RouterAdvert) Len() int { return RouterAdvertLen + r.Options.len() }

// Emit writes the message sent from src to dst into b (Len bytes), its
// checksum filled in.
func (r *RouterAdvert) Emit(b []byte, src, dst ipv6.Addr) {
	start(b, icmpv6.TypeRouterAdvertisement, RouterAdvertLen)
	b[4] = r.CurHopLimit
	if r.Managed {
		b[5] |= raManaged
	}
	if r.Other {
		b[5] |= raOther
	}
	binary.BigEndian.PutUint16(b[6:8], r.RouterLifetime)
	binary.BigEndian.PutUint32(b[8:12], r.ReachableTime)
	binary.BigEndian.PutUint32(b[12:16], r.RetransTimer)
	r.Options.emit(b[RouterAdvertLen:])
	icmpv6.FillChecksum(src, dst, b[:r.Len()])
}

// Len returns the message's length in bytes.
func (r *NeighborSolicit) Len() int { return NeighborSolicitLen + r.Options.len() }

// Emit writes the message sent from src to dst into b (Len bytes), its
// checksum filled in.
func (r *NeighborSolicit) Emit(b []byte, src, dst ipv6.Addr) {
	start(b, icmpv6.TypeNeighborSolicitation, NeighborSolicitLen)
	copy(b[8:24], r.Target[:])
	r.Options.emit(b[NeighborSolicitLen:])
	icmpv6.FillChecksum(src, dst, b[:r.Len()])
}

// Len returns the message's length in bytes.
func (r *NeighborAdvert) Len() int { return NeighborAdvertLen + r.Options.len() }

// Emit writes the message sent from src to dst into b (Len bytes), its
// checksum filled in.
func (r *NeighborAdvert) Emit(b []byte, src, dst ipv6.Addr) {
	start(b, icmpv6.TypeNeighborAdvertisement, NeighborAdvertLen)
	if r.Router {
		b[4] |= naRouter
	}
	if r.Solicited {
		b[4] |= naSolicited
	}
	if r.Override {
		b[4] |= naOverride
	}
	copy(b[8:24], r.Target[:])
	r.Options.emit(b[NeighborAdvertLen:])
	icmpv6.FillChecksum(src, dst, b[:r.Len()])
}

// Len returns the message's length in bytes.
func (r *Redirect) Len() int { return RedirectLen + r.Options.len() }

// Emit writes the message sent from src to dst into b (Len bytes), its
// checksum filled in. Only routers send Redirects; Emit exists for the
// specs and the fuzz round trip.
func (r *Redirect) Emit(b []byte, src, dst ipv6.Addr) {
	start(b, icmpv6.TypeRedirect, RedirectLen)
	copy(b[8:24], r.Target[:])
	copy(b[24:40], r.Destination[:])
	r.Options.emit(b[RedirectLen:])
	icmpv6.FillChecksum(src, dst, b[:r.Len()])
}
