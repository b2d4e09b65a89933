package ndp

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Output is one ICMPv6 message for the caller's IPv6 layer to send.
type Output struct {
	// Src and Dst are the IPv6 addresses; the message's checksum is
	// computed over them.
	Src, Dst ipv6.Addr
	// HopLimit is 255 for ND (RFC 4861 sections 6.1, 7.1) and 1 for MLD
	// (RFC 3810 section 5).
	HopLimit uint8
	// RouterAlert asks for the Hop-by-Hop Options header of
	// RouterAlertHopByHop between the IPv6 header and the message (MLD).
	RouterAlert bool
	// LinkDst is the Ethernet destination: the group's MAC for a
	// multicast Dst (RFC 2464 section 7), the neighbour's otherwise.
	LinkDst ether.Addr
	// Msg is the ICMPv6 message, checksum filled in. It is the node's
	// scratch buffer: valid only during the call, to be copied.
	Msg []byte
}

// EventKind names what an Event reports.
type EventKind uint8

// Events the caller may act on beyond counting.
const (
	// EventAddressAssigned: Addr passed Duplicate Address Detection and
	// may be used (RFC 4862 section 5.4).
	EventAddressAssigned EventKind = iota + 1
	// EventAddressDuplicate: Duplicate Address Detection found Addr in
	// use by another node; it is not used (RFC 4862 section 5.4.5).
	EventAddressDuplicate
	// EventAddressDeprecated: Addr's preferred lifetime ended (RFC 4862
	// section 5.5.4); existing connections may keep it.
	EventAddressDeprecated
	// EventAddressRemoved: Addr's valid lifetime ended and it is gone.
	EventAddressRemoved
	// EventInterfaceDisabled: the link-local address formed from the
	// MAC is a duplicate, and IP operation on the interface should stop
	// (RFC 4862 section 5.4.5).
	EventInterfaceDisabled
	// EventGroupsChanged: the multicast groups changed; reload the NIC's
	// multicast filter from Node.MulticastMACs.
	EventGroupsChanged
	// EventRouterExpired: the default router Addr's lifetime ended or
	// it stopped being a router (RFC 4861 sections 6.3.5, 7.2.5).
	EventRouterExpired
	// EventLinkMTU: a Router Advertisement changed the link MTU (RFC
	// 4861 section 6.3.4); read it with Node.LinkMTU.
	EventLinkMTU
)

// String returns the kind's snake_case name.
func (k EventKind) String() string {
	switch k {
	case EventAddressAssigned:
		return "address_assigned"
	case EventAddressDuplicate:
		return "address_duplicate"
	case EventAddressDeprecated:
		return "address_deprecated"
	case EventAddressRemoved:
		return "address_removed"
	case EventInterfaceDisabled:
		return "interface_disabled"
	case EventGroupsChanged:
		return "groups_changed"
	case EventRouterExpired:
		return "router_expired"
	case EventLinkMTU:
		return "link_mtu"
	}
	return "unknown"
}

// Event is something the node tells its caller.
type Event struct {
	Kind EventKind
	// Addr is the address concerned, if any.
	Addr ipv6.Addr
}

// Sink takes the node's output, as stack/arp's Sink does. The IPv6
// interface implements it; tests implement it to record what would be
// sent.
type Sink interface {
	// SendICMPv6 sends the message out describes.
	SendICMPv6(now time.Duration, out Output)
	// SendPending transmits a packet that waited for address
	// resolution, now that its next hop's address mac is known. The sink
	// owns m.
	SendPending(now time.Duration, m *hw.Mbuf, mac ether.Addr)
	// DropPending releases (frees) a waiting packet the node gave up on
	// for a reason other than a failed resolution (queue limits,
	// eviction, Flush); the node has counted why.
	DropPending(m *hw.Mbuf)
	// AddressUnreachable hands back a packet whose next hop's address
	// resolution failed. RFC 4861 section 7.2.2: the sender "MUST return
	// ICMP destination unreachable indications with code 3 (Address
	// Unreachable) for each packet queued awaiting address resolution";
	// the sink sends that error (RFC 4443 section 3.1, subject to its
	// rate limit) and frees m.
	AddressUnreachable(now time.Duration, m *hw.Mbuf)
	// Notify reports an event.
	Notify(now time.Duration, ev Event)
}
