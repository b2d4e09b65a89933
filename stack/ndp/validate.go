package ndp

import (
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// IPInfo is what validation needs from the IPv6 packet that carried a
// message: its addresses, its Hop Limit, and whether a Hop-by-Hop
// Options header carried a Router Alert option with value 0 (MLD, RFC
// 2711), which MLD queries must have (RFC 3810 section 6.2).
type IPInfo struct {
	Src, Dst    ipv6.Addr
	HopLimit    uint8
	RouterAlert bool
}

// checkCommon applies the rules every ND message shares (RFC 4861
// sections 6.1.1, 6.1.2, 7.1.1, 7.1.2, 8.1): IP Hop Limit 255, a valid
// ICMP checksum, ICMP Code 0. Length and option rules are Parse's.
func checkCommon(ip IPInfo, msg []byte) error {
	if len(msg) < icmpv6.HeaderLen {
		return ErrTruncated
	}
	if ip.HopLimit != HopLimit {
		return ErrHopLimit
	}
	if !icmpv6.VerifyChecksum(ip.Src, ip.Dst, msg) {
		return ErrChecksum
	}
	if icmpv6.Header(msg).Code() != 0 {
		return ErrCode
	}
	return nil
}

// isSolicitedNode reports whether a is a solicited-node multicast
// address, ff02::1:ff00:0/104 (RFC 4291 section 2.7.1).
func isSolicitedNode(a ipv6.Addr) bool {
	return a.SolicitedNode() == a
}

// ValidateRouterSolicit parses msg, received in the packet ip describes,
// and applies RFC 4861 section 6.1.1: Hop Limit 255, valid checksum, Code
// 0, ICMP length 8 or more, no option of length zero, and no source
// link-layer address option when the source is the unspecified address.
func ValidateRouterSolicit(ip IPInfo, msg []byte) (RouterSolicit, error) {
	if err := checkCommon(ip, msg); err != nil {
		return RouterSolicit{}, err
	}
	r, err := ParseRouterSolicit(msg)
	if err != nil {
		return RouterSolicit{}, err
	}
	if ip.Src.IsUnspecified() && r.Options.HasSourceLinkAddr {
		return RouterSolicit{}, ErrUnspecifiedWithLinkAddr
	}
	return r, nil
}

// ValidateRouterAdvert parses msg and applies RFC 4861 section 6.1.2: a
// link-local source, Hop Limit 255, valid checksum, Code 0, ICMP length
// 16 or more, no option of length zero.
func ValidateRouterAdvert(ip IPInfo, msg []byte) (RouterAdvert, error) {
	if err := checkCommon(ip, msg); err != nil {
		return RouterAdvert{}, err
	}
	if !ip.Src.IsLinkLocal() {
		return RouterAdvert{}, ErrSourceNotLinkLocal
	}
	return ParseRouterAdvert(msg)
}

// ValidateNeighborSolicit parses msg and applies RFC 4861 section 7.1.1:
// Hop Limit 255, valid checksum, Code 0, ICMP length 24 or more, a target
// that is not multicast, no option of length zero, and, from the
// unspecified source (Duplicate Address Detection), a solicited-node
// multicast destination and no source link-layer address option.
func ValidateNeighborSolicit(ip IPInfo, msg []byte) (NeighborSolicit, error) {
	if err := checkCommon(ip, msg); err != nil {
		return NeighborSolicit{}, err
	}
	r, err := ParseNeighborSolicit(msg)
	switch {
	case err != nil:
		return NeighborSolicit{}, err
	case r.Target.IsMulticast():
		return NeighborSolicit{}, ErrTargetMulticast
	case ip.Src.IsUnspecified() && !isSolicitedNode(ip.Dst):
		return NeighborSolicit{}, ErrDADDestination
	case ip.Src.IsUnspecified() && r.Options.HasSourceLinkAddr:
		return NeighborSolicit{}, ErrUnspecifiedWithLinkAddr
	}
	return r, nil
}

// ValidateNeighborAdvert parses msg and applies RFC 4861 section 7.1.2:
// Hop Limit 255, valid checksum, Code 0, ICMP length 24 or more, a target
// that is not multicast, the Solicited flag clear when the destination
// is multicast, no option of length zero.
func ValidateNeighborAdvert(ip IPInfo, msg []byte) (NeighborAdvert, error) {
	if err := checkCommon(ip, msg); err != nil {
		return NeighborAdvert{}, err
	}
	r, err := ParseNeighborAdvert(msg)
	switch {
	case err != nil:
		return NeighborAdvert{}, err
	case r.Target.IsMulticast():
		return NeighborAdvert{}, ErrTargetMulticast
	case ip.Dst.IsMulticast() && r.Solicited:
		return NeighborAdvert{}, ErrSolicitedMulticast
	}
	return r, nil
}

// ValidateRedirect parses msg and applies the rules of RFC 4861 section
// 8.1 that need no routing state: a link-local source, Hop Limit 255,
// valid checksum, Code 0, ICMP length 40 or more, a Destination that is
// not multicast, a Target that is link-local or equal to the
// Destination, no option of length zero. (The rule that the source be
// the current first hop for the Destination needs the destination cache:
// Node.Input checks it.)
func ValidateRedirect(ip IPInfo, msg []byte) (Redirect, error) {
	if err := checkCommon(ip, msg); err != nil {
		return Redirect{}, err
	}
	if !ip.Src.IsLinkLocal() {
		return Redirect{}, ErrSourceNotLinkLocal
	}
	r, err := ParseRedirect(msg)
	switch {
	case err != nil:
		return Redirect{}, err
	case r.Destination.IsMulticast():
		return Redirect{}, ErrRedirectDestination
	case !r.Target.IsLinkLocal() && r.Target != r.Destination:
		return Redirect{}, ErrRedirectTarget
	}
	return r, nil
}
