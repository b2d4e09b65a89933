package ndp

// Error is the reason a Neighbor Discovery or MLD message was dropped by
// Parse or by a Validate function. Values compare with == and converting
// one to error does not allocate.
type Error uint8

// Reasons a message is dropped. The RFC rule each one enforces is cited
// where the rule is written (validate.go, option.go, mld.go).
const (
	// ErrTruncated: shorter than the message's fixed part (RFC 4861
	// sections 6.1.1, 6.1.2, 7.1.1, 7.1.2, 8.1: "ICMP length ... is N or
	// more octets"), or an option or record runs past the end.
	ErrTruncated Error = iota + 1
	// ErrHopLimit: an ND message whose IP Hop Limit is not 255, so it may
	// have been forwarded by a router (RFC 4861 sections 6.1, 7.1, 8.1),
	// or an MLD query whose Hop Limit is not 1 (RFC 3810 section 6.2).
	ErrHopLimit
	// ErrChecksum: the ICMPv6 checksum does not verify (RFC 4443 section
	// 2.3; RFC 4861 "the ICMP Checksum is valid").
	ErrChecksum
	// ErrCode: an ND message whose ICMP Code is not 0.
	ErrCode
	// ErrOptionLength: an option of length zero (RFC 4861 section 4.6:
	// "Nodes MUST silently discard an ND packet that contains an option
	// with length zero").
	ErrOptionLength
	// ErrBadOption: a known option whose length is wrong for its type (a
	// link-layer address option other than 8 bytes on Ethernet, RFC 2464
	// section 6; a prefix information option other than 32 bytes or an
	// MTU option other than 8, RFC 4861 sections 4.6.2 and 4.6.4).
	ErrBadOption
	// ErrSourceNotLinkLocal: a Router Advertisement, Redirect or MLD
	// query whose source is not a link-local address (RFC 4861 sections
	// 6.1.2 and 8.1; RFC 3810 section 5.1.14).
	ErrSourceNotLinkLocal
	// ErrUnspecifiedWithLinkAddr: a Router or Neighbor Solicitation from
	// the unspecified address that carries a source link-layer address
	// option (RFC 4861 sections 6.1.1 and 7.1.1).
	ErrUnspecifiedWithLinkAddr
	// ErrTargetMulticast: a Neighbor Solicitation or Advertisement whose
	// target is a multicast address (RFC 4861 sections 7.1.1, 7.1.2).
	ErrTargetMulticast
	// ErrDADDestination: a Neighbor Solicitation from the unspecified
	// address not sent to a solicited-node multicast address (RFC 4861
	// section 7.1.1).
	ErrDADDestination
	// ErrSolicitedMulticast: a Neighbor Advertisement to a multicast
	// address with the Solicited flag set (RFC 4861 section 7.1.2).
	ErrSolicitedMulticast
	// ErrRedirectDestination: a Redirect whose Destination Address is a
	// multicast address (RFC 4861 section 8.1).
	ErrRedirectDestination
	// ErrRedirectTarget: a Redirect whose Target Address is neither a
	// link-local address nor the Destination Address (RFC 4861 section
	// 8.1).
	ErrRedirectTarget
	// ErrQueryLength: an MLD query neither 24 octets (MLDv1) nor 28 or
	// more (MLDv2), which RFC 3810 section 8.1 says to ignore.
	ErrQueryLength
	// ErrNoRouterAlert: an MLD query without the Router Alert option in
	// a Hop-by-Hop Options header (RFC 3810 section 6.2).
	ErrNoRouterAlert
	// ErrType: a message of a type this package does not handle.
	ErrType
)

// Error implements error.
func (e Error) Error() string { return "ndp: " + e.Name() }

// Name is a short snake_case key for the reason, for statistics.
func (e Error) Name() string {
	switch e {
	case ErrTruncated:
		return "truncated"
	case ErrHopLimit:
		return "bad_hop_limit"
	case ErrChecksum:
		return "bad_checksum"
	case ErrCode:
		return "bad_code"
	case ErrOptionLength:
		return "zero_length_option"
	case ErrBadOption:
		return "bad_option"
	case ErrSourceNotLinkLocal:
		return "source_not_link_local"
	case ErrUnspecifiedWithLinkAddr:
		return "unspecified_with_link_addr"
	case ErrTargetMulticast:
		return "target_multicast"
	case ErrDADDestination:
		return "dad_destination"
	case ErrSolicitedMulticast:
		return "solicited_to_multicast"
	case ErrRedirectDestination:
		return "redirect_destination_multicast"
	case ErrRedirectTarget:
		return "redirect_bad_target"
	case ErrQueryLength:
		return "bad_query_length"
	case ErrNoRouterAlert:
		return "no_router_alert"
	case ErrType:
		return "bad_type"
	}
	return "unknown"
}
