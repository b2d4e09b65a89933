package ndp

import (
	"errors"
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

// AddrState is an address's state (RFC 4862 section 2).
type AddrState uint8

// Address states.
const (
	// AddrTentative: Duplicate Address Detection is running; the
	// address is not assigned (RFC 4862 section 5.4).
	AddrTentative AddrState = iota + 1
	// AddrPreferred: assigned, for any use.
	AddrPreferred
	// AddrDeprecated: assigned, its preferred lifetime over: not to be
	// chosen for new communication (RFC 4862 section 5.5.4).
	AddrDeprecated
	// AddrDuplicate: Duplicate Address Detection found it in use; never
	// used (RFC 4862 section 5.4.5). It stays listed, as Linux keeps a
	// "dadfailed" address, so that the next Router Advertisement does
	// not form and test it again.
	AddrDuplicate
)

// String returns the state's name.
func (s AddrState) String() string {
	switch s {
	case AddrTentative:
		return "tentative"
	case AddrPreferred:
		return "preferred"
	case AddrDeprecated:
		return "deprecated"
	case AddrDuplicate:
		return "duplicate"
	}
	return "none"
}

// AddrOrigin says where an address came from.
type AddrOrigin uint8

// Address origins.
const (
	// OriginLinkLocal: fe80::/64 and the interface identifier (RFC 4862
	// section 5.3).
	OriginLinkLocal AddrOrigin = iota + 1
	// OriginStatic: configured (AddStatic).
	OriginStatic
	// OriginSLAAC: formed from a Router Advertisement's prefix (RFC 4862
	// section 5.5.3).
	OriginSLAAC
)

// AddrInfo describes an address of the interface.
type AddrInfo struct {
	Addr      ipv6.Addr
	PrefixLen int
	State     AddrState
	Origin    AddrOrigin
	// ValidUntil and PreferredUntil are the ends of the lifetimes
	// (Never: infinite).
	ValidUntil     time.Duration
	PreferredUntil time.Duration
}

// address is an entry of the address list.
type address struct {
	AddrInfo
	dadLeft int           // DAD solicitations still to send
	dadAt   time.Duration // next DAD step while tentative
}

// Addresses returns the interface's addresses, appended to dst.
func (n *Node) Addresses(dst []AddrInfo) []AddrInfo {
	for i := range n.addrs {
		dst = append(dst, n.addrs[i].AddrInfo)
	}
	return dst
}

// findAddr returns the index of a in n.addrs, or -1. It tries the last
// answer first (addrHint), so that the per-packet checks of one
// connection's address (IsAssigned on output and input) cost one
// comparison however many addresses the interface has.
func (n *Node) findAddr(a ipv6.Addr) int {
	if k := n.addrHint; k < len(n.addrs) && n.addrs[k].Addr == a {
		return k
	}
	for i := range n.addrs {
		if n.addrs[i].Addr == a {
			n.addrHint = i
			return i
		}
	}
	return -1
}

// IsAssigned reports whether a is an address of the interface that may
// receive packets: preferred or deprecated. A tentative address is not
// (RFC 4862 section 5.4: packets to it other than Neighbor Discovery's
// are silently discarded).
func (n *Node) IsAssigned(a ipv6.Addr) bool {
	i := n.findAddr(a)
	return i >= 0 && (n.addrs[i].State == AddrPreferred || n.addrs[i].State == AddrDeprecated)
}

// linkLocal returns the assigned link-local address.
func (n *Node) linkLocal() (ipv6.Addr, bool) {
	for i := range n.addrs {
		a := &n.addrs[i]
		if a.Origin == OriginLinkLocal && (a.State == AddrPreferred || a.State == AddrDeprecated) {
			return a.Addr, true
		}
	}
	return ipv6.Addr{}, false
}

// sourceFor chooses the source address of a solicitation for target
// (RFC 4861 section 7.2.2 lets "any one of the addresses assigned to the
// interface" be used): the link-local address for a link-local target,
// else a preferred address sharing the target's /64, else any assigned
// address, link-local first.
func (n *Node) sourceFor(target ipv6.Addr) (ipv6.Addr, bool) {
	ll, llOK := n.linkLocal()
	if target.IsLinkLocal() {
		return ll, llOK
	}
	for i := range n.addrs {
		a := &n.addrs[i]
		if a.State == AddrPreferred && a.Origin != OriginLinkLocal && matches(target, a.Addr, 64) {
			return a.Addr, true
		}
	}
	if llOK {
		return ll, true
	}
	for i := range n.addrs {
		if a := &n.addrs[i]; a.State == AddrPreferred || a.State == AddrDeprecated {
			return a.Addr, true
		}
	}
	return ipv6.Addr{}, false
}

// AddStatic configures address a with prefix length l. It goes through
// Duplicate Address Detection like any other (RFC 4862 section 5.4:
// "Duplicate Address Detection MUST be performed on all unicast
// addresses prior to assigning them"), and its prefix is on-link for as
// long as it is configured, as Linux adds the prefix route of an address
// configured by hand.
//
// An address configured as the interface starts (before Start, or
// after it while the node has sent nothing yet) waits a random delay
// in [0, MaxRtrSolicitationDelay) before it joins its solicited-node
// group and sends its first DAD solicitation, each address its own
// draw from the node's seeded source: RFC 4862 section 5.4.2 "If the
// Neighbor Solicitation is going to be the first message sent from an
// interface after interface (re)initialization, the node SHOULD delay
// joining the solicited-node multicast address by a random delay
// between 0 and MAX_RTR_SOLICITATION_DELAY", so that the nodes of a
// link powered up together do not all solicit at once (Linux draws
// the same delay for every address's DAD, addrconf_dad_kick,
// net/ipv6/addrconf.c). An address added later starts DAD at once.
// MaxRtrSolicitationDelay 0 turns the delay off, and so does
// DupAddrDetectTransmits 0: with no solicitation to spread out the
// address is assigned, and its group joined, at once (a simulated
// scenario's addresses, rig/ipv6.go, are usable at time 0).
func (n *Node) AddStatic(now time.Duration, a ipv6.Addr, l int, sink Sink) error {
	if l < 1 || l > 128 {
		return fmt.Errorf("ndp: address %v: prefix length %d is outside 1..128", a, l)
	}
	var delay time.Duration
	if !n.spoken && n.cfg.DupAddrDetectTransmits > 0 {
		delay = n.jitter(n.cfg.MaxRtrSolicitationDelay)
	}
	if err := n.addAddress(now, a, l, OriginStatic, delay, Never, Never, sink); err != nil {
		return err
	}
	p := masked(a, uint8(l))
	for i := range n.prefixes {
		if n.prefixes[i].prefix == p && n.prefixes[i].length == uint8(l) {
			n.prefixes[i].expires = Never
			return nil
		}
	}
	if len(n.prefixes) >= n.cfg.MaxPrefixes {
		n.stats.PrefixesDropFull++
		return nil
	}
	n.prefixes = append(n.prefixes, prefix{prefix: p, length: uint8(l), expires: Never})
	n.stats.PrefixesAdded++
	n.flushDestinations()
	return nil
}

// RemoveAddress removes a (any origin), leaving its solicited-node
// group.
func (n *Node) RemoveAddress(now time.Duration, a ipv6.Addr, sink Sink) bool {
	i := n.findAddr(a)
	if i < 0 {
		return false
	}
	n.dropAddr(now, i, sink)
	return true
}

// addAddress adds a tentative address, joins its solicited-node group
// at once (so that DAD messages for it are received, RFC 4862 section
// 5.4.2) and starts Duplicate Address Detection after delay; the MLD
// report for the group goes with the first solicitation.
func (n *Node) addAddress(now time.Duration, a ipv6.Addr, l int, origin AddrOrigin, delay, valid, preferred time.Duration, sink Sink) error {
	switch {
	case a.IsMulticast() || a.IsUnspecified() || a.IsLoopback():
		return fmt.Errorf("ndp: address %v is not a unicast address", a)
	case n.findAddr(a) >= 0:
		return fmt.Errorf("ndp: address %v is already configured", a)
	case len(n.addrs) >= n.cfg.MaxAddresses:
		n.stats.AddressesDropFull++
		return errors.New("ndp: address list full (max_addresses)")
	}
	if err := n.join(now, a.SolicitedNode(), now+delay, sink); err != nil {
		return err
	}
	n.addrs = append(n.addrs, address{
		AddrInfo: AddrInfo{Addr: a, PrefixLen: l, State: AddrTentative, Origin: origin, ValidUntil: valid, PreferredUntil: preferred},
		dadLeft:  n.cfg.DupAddrDetectTransmits,
		dadAt:    now + delay,
	})
	n.stats.DADStarted++
	if n.cfg.DupAddrDetectTransmits == 0 {
		// RFC 4862 section 5.1: "A value of zero indicates that
		// Duplicate Address Detection is not performed".
		n.assigned(now, len(n.addrs)-1, sink)
		return nil
	}
	n.arm(now + delay)
	return nil
}

// assigned ends Duplicate Address Detection for address i with success.
func (n *Node) assigned(now time.Duration, i int, sink Sink) {
	a := &n.addrs[i]
	a.State = AddrPreferred
	if a.PreferredUntil <= now {
		a.State = AddrDeprecated
	}
	n.stats.DADSucceeded++
	if a.Origin == OriginLinkLocal && n.rsWaitDAD {
		n.rsWaitDAD = false
		n.rsAt = now
		n.arm(now)
	}
	sink.Notify(now, Event{Kind: EventAddressAssigned, Addr: a.Addr})
}

// duplicate ends Duplicate Address Detection for address i with failure
// (RFC 4862 section 5.4.5): the address is not used, its group is left
// and the event reported; for the link-local address formed from the
// MAC, IP operation on the interface stops.
func (n *Node) duplicate(now time.Duration, i int, sink Sink) {
	a := &n.addrs[i]
	a.State = AddrDuplicate
	a.dadLeft = 0
	n.stats.DADDuplicates++
	n.leave(now, a.Addr.SolicitedNode(), sink)
	sink.Notify(now, Event{Kind: EventAddressDuplicate, Addr: a.Addr})
	if a.Origin == OriginLinkLocal && !n.disabled {
		n.disabled = true
		n.stats.InterfaceDisabled++
		n.rsLeft, n.rsAt, n.rsWaitDAD = 0, Never, false
		sink.Notify(now, Event{Kind: EventInterfaceDisabled, Addr: a.Addr})
	}
}

func (n *Node) dropAddr(now time.Duration, i int, sink Sink) {
	a := n.addrs[i]
	n.addrs = append(n.addrs[:i], n.addrs[i+1:]...)
	if a.State != AddrDuplicate {
		n.leave(now, a.Addr.SolicitedNode(), sink)
	}
	n.stats.AddressesRemoved++
	sink.Notify(now, Event{Kind: EventAddressRemoved, Addr: a.Addr})
}

// autoconf forms or refreshes an address from an autonomous prefix (RFC
// 4862 section 5.5.3 d and e); the caller has applied rules a to c.
func (n *Node) autoconf(now time.Duration, pi *PrefixInfo, sink Sink) {
	// d: "If the sum of the prefix length and interface identifier
	// length does not equal 128 bits, the Prefix Information option
	// MUST be ignored." The Ethernet interface identifier is 64 bits
	// (RFC 2464 section 4).
	if pi.PrefixLen != 64 {
		n.stats.RxPrefixesNotAutoconf++
		return
	}
	if n.disabled {
		return
	}
	p := masked(pi.Prefix, 64)
	for i := range n.addrs {
		a := &n.addrs[i]
		if a.Origin != OriginSLAAC || masked(a.Addr, 64) != p {
			continue
		}
		n.refreshLifetimes(now, a, pi, sink)
		return
	}
	if pi.ValidLifetime == 0 {
		return
	}
	addr := p.WithInterfaceID(n.iid)
	if n.findAddr(addr) >= 0 {
		// Already configured (statically, say): nothing to form.
		return
	}
	if err := n.addAddress(now, addr, 64, OriginSLAAC, 0, addLifetime(now, pi.ValidLifetime), addLifetime(now, pi.PreferredLifetime), sink); err != nil {
		return
	}
	n.stats.SLAACAddresses++
	n.arm(n.addrs[len(n.addrs)-1].PreferredUntil)
	n.arm(n.addrs[len(n.addrs)-1].ValidUntil)
}

// twoHours is the bound of RFC 4862 section 5.5.3 e that keeps a forged
// advertisement from cutting an address's valid lifetime short.
const twoHours = 2 * time.Hour

// refreshLifetimes applies RFC 4862 section 5.5.3 e to an existing
// autoconfigured address: the preferred lifetime is reset, the valid
// lifetime is set to the received one if that is above two hours or
// above the remaining lifetime, ignored if the remaining lifetime is two
// hours or less, and set to two hours otherwise.
func (n *Node) refreshLifetimes(now time.Duration, a *address, pi *PrefixInfo, sink Sink) {
	a.PreferredUntil = addLifetime(now, pi.PreferredLifetime)
	if a.State == AddrDeprecated && a.PreferredUntil > now {
		a.State = AddrPreferred
	}
	received := lifetime(pi.ValidLifetime)
	remaining := Never
	if a.ValidUntil != Never {
		remaining = a.ValidUntil - now
	}
	switch {
	case received > twoHours || received > remaining:
		a.ValidUntil = addLifetime(now, pi.ValidLifetime)
	case remaining <= twoHours:
		n.stats.ValidLifetimeClamped++
	default:
		n.stats.ValidLifetimeClamped++
		a.ValidUntil = now + twoHours
	}
	n.arm(a.PreferredUntil)
	n.arm(a.ValidUntil)
}

// pollAddresses runs Duplicate Address Detection (RFC 4862 section
// 5.4.2: DupAddrDetectTransmits solicitations from the unspecified
// address to the solicited-node group, RetransTimer apart, and success
// RetransTimer after the last) and the lifetimes (section 5.5.4).
func (n *Node) pollAddresses(now time.Duration, sink Sink) time.Duration {
	next := Never
	for i := 0; i < len(n.addrs); {
		a := &n.addrs[i]
		if a.State == AddrTentative && now >= a.dadAt {
			if a.dadLeft > 0 {
				a.dadLeft--
				a.dadAt = now + n.retrans
				n.dadSolicit(now, a.Addr, sink)
			} else {
				n.assigned(now, i, sink)
			}
		}
		if a.State == AddrPreferred && now >= a.PreferredUntil {
			a.State = AddrDeprecated
			n.stats.AddressesDeprecated++
			sink.Notify(now, Event{Kind: EventAddressDeprecated, Addr: a.Addr})
		}
		if now >= a.ValidUntil {
			n.dropAddr(now, i, sink)
			continue
		}
		if a.State == AddrTentative {
			next = min(next, a.dadAt)
		}
		if a.State == AddrPreferred {
			next = min(next, a.PreferredUntil)
		}
		next = min(next, a.ValidUntil)
		i++
	}
	return next
}

// dadSolicit sends one Duplicate Address Detection solicitation for a
// (RFC 4862 section 5.4.2): from the unspecified address, to a's
// solicited-node group, with no source link-layer address option (RFC
// 4861 section 7.1.1 forbids one from ::). The group's MLD report is due
// at the same time, and Poll runs MLD's timers first, so the report goes
// out before the solicitation as section 5.4.2 requires ("Before sending
// a Neighbor Solicitation, an interface MUST join ... the solicited-node
// multicast address of the tentative address").
func (n *Node) dadSolicit(now time.Duration, a ipv6.Addr, sink Sink) {
	ns := NeighborSolicit{Target: a}
	dst := a.SolicitedNode()
	msg := n.buf[:ns.Len()]
	ns.Emit(msg, ipv6.Addr{}, dst)
	n.stats.TxDADSolicits++
	n.send(now, sink, ipv6.Addr{}, dst, HopLimit, linkDst(dst), msg)
}
