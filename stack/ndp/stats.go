package ndp

// Stats are the node's counters: every message received by type, every
// drop by reason, every message sent, and the events of the neighbour
// cache, router discovery, address configuration and MLD. Names follow
// Linux's where it has one (`nstat` Icmp6In*, Ip6* and the neighbour
// table's `ip -s ntable` figures).
type Stats struct {
	// Messages received that passed validation, by type.
	RxRouterSolicits   uint64 `json:"rx_router_solicits"`
	RxRouterAdverts    uint64 `json:"rx_router_adverts"`
	RxNeighborSolicits uint64 `json:"rx_neighbor_solicits"`
	RxNeighborAdverts  uint64 `json:"rx_neighbor_adverts"`
	RxRedirects        uint64 `json:"rx_redirects"`
	RxQueries          uint64 `json:"rx_queries"`
	RxQueriesV1        uint64 `json:"rx_queries_v1"`
	// RxReports: other listeners' reports, which hosts ignore (RFC 3810
	// section 6).
	RxReports uint64 `json:"rx_reports"`

	// Messages dropped by validation, by reason (see Error).
	RxTruncated                    uint64 `json:"rx_truncated"`
	RxBadHopLimit                  uint64 `json:"rx_bad_hop_limit"`
	RxBadChecksum                  uint64 `json:"rx_bad_checksum"`
	RxBadCode                      uint64 `json:"rx_bad_code"`
	RxZeroLengthOption             uint64 `json:"rx_zero_length_option"`
	RxBadOption                    uint64 `json:"rx_bad_option"`
	RxSourceNotLinkLocal           uint64 `json:"rx_source_not_link_local"`
	RxUnspecifiedWithLinkAddr      uint64 `json:"rx_unspecified_with_link_addr"`
	RxTargetMulticast              uint64 `json:"rx_target_multicast"`
	RxDADDestination               uint64 `json:"rx_dad_destination"`
	RxSolicitedToMulticast         uint64 `json:"rx_solicited_to_multicast"`
	RxRedirectDestinationMulticast uint64 `json:"rx_redirect_destination_multicast"`
	RxRedirectBadTarget            uint64 `json:"rx_redirect_bad_target"`
	RxBadQueryLength               uint64 `json:"rx_bad_query_length"`
	RxNoRouterAlert                uint64 `json:"rx_no_router_alert"`
	RxBadType                      uint64 `json:"rx_bad_type"`

	// Valid messages not acted on, by reason.
	// RxRouterSolicitsIgnored: hosts discard solicitations (RFC 4861
	// section 6.2.6).
	RxRouterSolicitsIgnored uint64 `json:"rx_router_solicits_ignored"`
	// RxRedirectsIgnored: redirects are counted, never followed (see
	// doc.go); RxRedirectsNotFirstHop of them came from a node that is
	// not the first hop for the destination (RFC 4861 section 8.1).
	RxRedirectsIgnored     uint64 `json:"rx_redirects_ignored"`
	RxRedirectsNotFirstHop uint64 `json:"rx_redirects_not_first_hop"`
	// RxSolicitsNotForUs: the target is not an address of ours (RFC 4861
	// section 7.2.3).
	RxSolicitsNotForUs uint64 `json:"rx_solicits_not_for_us"`
	// RxSolicitsForTentative: address resolution for one of our
	// tentative addresses, not answered (RFC 4862 section 5.4.3).
	RxSolicitsForTentative uint64 `json:"rx_solicits_for_tentative"`
	// RxAdvertsUnknown: advertisements with no cache entry (RFC 4861
	// section 7.2.5: "silently discarded").
	RxAdvertsUnknown uint64 `json:"rx_adverts_unknown"`
	// RxAdvertsNoLinkAddr: answers to a resolution without a target
	// link-layer address (RFC 4861 section 7.2.5).
	RxAdvertsNoLinkAddr uint64 `json:"rx_adverts_no_link_addr"`
	// RxAddrConflicts: advertisements from another node for one of our
	// assigned addresses (RFC 4862 section 5.4.4: log a system
	// management error).
	RxAddrConflicts uint64 `json:"rx_addr_conflicts"`
	// RxPrefixesIgnored: prefix information options ignored (link-local
	// prefix, RFC 4861 section 6.3.4; preferred above valid lifetime,
	// RFC 4862 section 5.5.3 c; length above 128).
	RxPrefixesIgnored uint64 `json:"rx_prefixes_ignored"`
	// RxPrefixesNotAutoconf: A=1 prefixes whose length is not 64, which
	// cannot form an address with a 64-bit interface identifier (RFC
	// 4862 section 5.5.3 d, RFC 2464 section 4).
	RxPrefixesNotAutoconf uint64 `json:"rx_prefixes_not_autoconf"`
	// RxMTUIgnored: MTU options outside 1280..LinkMTU (RFC 4861 section
	// 6.3.4, RFC 8200 section 5).
	RxMTUIgnored uint64 `json:"rx_mtu_ignored"`
	// RxQueriesNotJoined: specific queries for a group we have not
	// joined.
	RxQueriesNotJoined uint64 `json:"rx_queries_not_joined"`

	// Messages handed to the sink.
	TxRouterSolicits   uint64 `json:"tx_router_solicits"`
	TxNeighborSolicits uint64 `json:"tx_neighbor_solicits"` // multicast, address resolution
	TxProbes           uint64 `json:"tx_probes"`            // unicast, PROBE
	TxDADSolicits      uint64 `json:"tx_dad_solicits"`
	TxNeighborAdverts  uint64 `json:"tx_neighbor_adverts"`
	TxReports          uint64 `json:"tx_reports"`    // MLDv2 reports
	TxReportsV1        uint64 `json:"tx_reports_v1"` // MLDv1 reports (compatibility mode)
	TxDonesV1          uint64 `json:"tx_dones_v1"`
	// TxNoSource: solicitations not sent because no address is assigned
	// to send them from (RFC 4861 section 7.2.2).
	TxNoSource uint64 `json:"tx_no_source"`
	// TxAdvertsUnresolved: answers not sent to a unicast solicitation
	// without a source link-layer address whose sender is not in the
	// cache; resolution of the sender starts instead.
	TxAdvertsUnresolved uint64 `json:"tx_adverts_unresolved"`

	// Neighbour cache.
	NeighborsCreated  uint64 `json:"neighbors_created"`
	Resolved          uint64 `json:"resolved"`
	ResolutionsFailed uint64 `json:"resolutions_failed"` // after MaxMulticastSolicit
	NUDFailed         uint64 `json:"nud_failed"`         // PROBE after MaxUnicastSolicit
	Confirmations     uint64 `json:"confirmations"`      // Confirm calls that made an entry REACHABLE
	ToStale           uint64 `json:"to_stale"`           // REACHABLE entries past ReachableTime
	LinkAddrChanges   uint64 `json:"link_addr_changes"`
	Evicted           uint64 `json:"evicted"`

	// Packets waiting for resolution.
	PendingQueued        uint64 `json:"pending_queued"`
	PendingSent          uint64 `json:"pending_sent"`
	PendingDropDestFull  uint64 `json:"pending_drop_dest_full"`
	PendingDropTotalFull uint64 `json:"pending_drop_total_full"`
	PendingUnreachable   uint64 `json:"pending_unreachable"` // handed to AddressUnreachable
	PendingDropEvicted   uint64 `json:"pending_drop_evicted"`
	PendingDropFlushed   uint64 `json:"pending_drop_flushed"`

	// Router discovery.
	RoutersAdded        uint64 `json:"routers_added"`
	RoutersExpired      uint64 `json:"routers_expired"` // lifetime ran out
	RoutersRemoved      uint64 `json:"routers_removed"` // lifetime 0, or R flag cleared
	RoutersDropFull     uint64 `json:"routers_drop_full"`
	PrefixesAdded       uint64 `json:"prefixes_added"`
	PrefixesExpired     uint64 `json:"prefixes_expired"`
	PrefixesDropFull    uint64 `json:"prefixes_drop_full"`
	DestinationsFlushed uint64 `json:"destinations_flushed"`
	// NoRoute: next-hop determination for an off-link destination with
	// an empty default router list.
	NoRoute        uint64 `json:"no_route"`
	LinkMTUChanges uint64 `json:"link_mtu_changes"`

	// Address configuration.
	DADStarted          uint64 `json:"dad_started"`
	DADSucceeded        uint64 `json:"dad_succeeded"`
	DADDuplicates       uint64 `json:"dad_duplicates"`
	SLAACAddresses      uint64 `json:"slaac_addresses"`
	AddressesDeprecated uint64 `json:"addresses_deprecated"`
	AddressesRemoved    uint64 `json:"addresses_removed"`
	AddressesDropFull   uint64 `json:"addresses_drop_full"`
	// ValidLifetimeClamped: RA valid lifetimes lowered to 2 hours or
	// ignored by the rule of RFC 4862 section 5.5.3 e.
	ValidLifetimeClamped uint64 `json:"valid_lifetime_clamped"`
	InterfaceDisabled    uint64 `json:"interface_disabled"`

	// MLD.
	GroupsJoined         uint64 `json:"groups_joined"`
	GroupsLeft           uint64 `json:"groups_left"`
	GroupsDropFull       uint64 `json:"groups_drop_full"`
	QuerySourcesOverflow uint64 `json:"query_sources_overflow"`
	V1ModeEntered        uint64 `json:"v1_mode_entered"`
}

// CountError counts a message dropped by Parse or a Validate function.
func (s *Stats) CountError(err error) {
	e, _ := err.(Error)
	switch e {
	case ErrTruncated:
		s.RxTruncated++
	case ErrHopLimit:
		s.RxBadHopLimit++
	case ErrChecksum:
		s.RxBadChecksum++
	case ErrCode:
		s.RxBadCode++
	case ErrOptionLength:
		s.RxZeroLengthOption++
	case ErrBadOption:
		s.RxBadOption++
	case ErrSourceNotLinkLocal:
		s.RxSourceNotLinkLocal++
	case ErrUnspecifiedWithLinkAddr:
		s.RxUnspecifiedWithLinkAddr++
	case ErrTargetMulticast:
		s.RxTargetMulticast++
	case ErrDADDestination:
		s.RxDADDestination++
	case ErrSolicitedMulticast:
		s.RxSolicitedToMulticast++
	case ErrRedirectDestination:
		s.RxRedirectDestinationMulticast++
	case ErrRedirectTarget:
		s.RxRedirectBadTarget++
	case ErrQueryLength:
		s.RxBadQueryLength++
	case ErrNoRouterAlert:
		s.RxNoRouterAlert++
	default:
		s.RxBadType++
	}
}
