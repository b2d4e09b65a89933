// Package ndp is IPv6 Neighbor Discovery (RFC 4861), stateless address
// autoconfiguration with Duplicate Address Detection (RFC 4862) and the
// host side of MLDv2 (RFC 3810) for one interface: IPv6's ARP, and shaped
// like stack/arp. It has zero-copy views of the messages, their parsed
// forms with Parse and Emit, one Validate function per message applying
// the RFC's validation rules, and a sans-I/O Node: every call takes the
// time, output goes through a Sink the caller implements, Poll runs the
// timers and returns the next deadline, and randomness comes from a
// caller-supplied source.
//
// Messages are ICMPv6 bodies from the type byte on. The caller's IPv6
// layer demultiplexes ICMPv6 types 130-137 and 143 to Node.Input with an
// IPInfo (addresses, Hop Limit, Router Alert), and puts what the Sink's
// SendICMPv6 gives it into a packet: IPv6 header with the Output's
// addresses and Hop Limit, Next Header 58, or for MLD (Output.RouterAlert)
// Next Header 0 and the 8 bytes of RouterAlertHopByHop(58) first.
//
// Behaviour and sources:
//   - Formats: RFC 4861 section 4 (Router Solicitation and Advertisement,
//     Neighbor Solicitation and Advertisement, Redirect) and section 4.6
//     options (source and target link-layer address, prefix information,
//     MTU; the redirected header is skipped, unknown options ignored, an
//     option of length zero discards the message).
//   - Validation: sections 6.1.1, 6.1.2, 7.1.1, 7.1.2 and 8.1, each rule
//     an Error counted in Stats.
//   - Neighbour cache: the states of section 7.3.2 and the transitions of
//     section 7.3.3 and appendix C, with solicitations retransmitted
//     RetransTimer apart, MaxMulticastSolicit while resolving and
//     MaxUnicastSolicit while probing; reachability confirmed by a
//     solicited advertisement or by the upper layer (Confirm, section
//     7.3.1); ReachableTime drawn from 0.5 to 1.5 times BaseReachableTime
//     (section 6.3.2). Packets wait while INCOMPLETE, bounded per
//     neighbour in packets and bytes (Linux's unres_qlen_bytes) and in
//     total; when resolution fails they go back through
//     Sink.AddressUnreachable for ICMPv6 destination unreachable code 3
//     (section 7.2.2).
//   - Router discovery (section 6.3): Router Solicitations at start
//     (section 6.3.7), the default router list and prefix list from
//     advertisements with their lifetimes (section 6.3.4), Cur Hop Limit,
//     Reachable Time and Retrans Timer, the MTU option within
//     1280..LinkMTU; next-hop determination (section 5.2) with default
//     router selection (section 6.3.6) and a destination cache. A
//     default router may also be configured (Config.DefaultRouter): on
//     the list from Start, first, never expiring, and not removed by
//     advertisements, as a default route added by hand on Linux.
//   - Per-packet output and confirmation through a Path (path.go): the
//     caller's cached next hop and neighbour entry, as Linux's dst_entry
//     points at its neighbour, valid while the node's Generation (bumped
//     by every neighbour entry created, released or given a new
//     link-layer address, and every router, prefix or destination cache
//     change) is unchanged; NextHopPath, ResolvePath and ConfirmPath
//     answer and move entries exactly as NextHop, Resolve and Confirm.
//   - Redirects (section 8) are validated and counted, never followed:
//     Savanna's links carry one subnet and at most one router, so a
//     legitimate Redirect never arrives, and acting on one re-points
//     traffic on the word of an unauthenticated packet (RFC 3756 section
//     4.1.3, the redirect attack). Following them means a destination
//     cache entry whose next hop is the Redirect's target (section 8.3);
//     the destination cache is here for that.
//   - Addresses (RFC 4862): the link-local address from the modified
//     EUI-64 interface identifier (section 5.3); Duplicate Address
//     Detection on every address, static ones included (section 5.4),
//     each address configured at start (before the node's first
//     message) after a random delay of its own below
//     MaxRtrSolicitationDelay when DAD runs (5.4.2); a duplicate is never
//     used, is counted and reported (5.4.5), and a duplicate link-local
//     address disables the interface; SLAAC from A=1 /64 prefixes with
//     the two-hour rule for valid lifetimes (5.5.3), deprecation and
//     removal by lifetime (5.5.4).
//   - MLDv2 (RFC 3810): the groups listened to (all-nodes, each
//     address's solicited-node group, Join) as a list and as the NIC
//     filter's MACs; state change reports on join and leave, Robustness
//     times (section 6.1); answers to General, Multicast Address Specific
//     and Source Specific queries after a random delay (sections 6.2,
//     6.3); MLDv1 compatibility mode after an MLDv1 query (section 8.2.1).
package ndp
