package ndp

import (
	"time"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

// router is an entry of the default router list (RFC 4861 section 5.1).
type router struct {
	addr    ipv6.Addr
	expires time.Duration
	// static marks the configured default router (Config.DefaultRouter):
	// it never expires and Router Advertisements and Neighbor
	// Advertisements do not remove it, as Linux leaves a default route
	// added by hand to itself and expires or removes only the routes it
	// learned from advertisements (RTF_RA_ROUTER, fib6_clean_tohost in
	// net/ipv6/route.c).
	static bool
}

// prefix is an entry of the prefix list (RFC 4861 section 5.1): the
// prefixes that are on-link.
type prefix struct {
	prefix  ipv6.Addr
	length  uint8
	expires time.Duration // Never for static and infinite prefixes
}

// RouterInfo describes a default router.
type RouterInfo struct {
	Addr    ipv6.Addr
	Expires time.Duration
	// Static says it was configured (Config.DefaultRouter), not learned.
	Static bool
}

// Routers returns the default router list, appended to dst.
func (n *Node) Routers(dst []RouterInfo) []RouterInfo {
	for _, r := range n.routers {
		dst = append(dst, RouterInfo{Addr: r.addr, Expires: r.expires, Static: r.static})
	}
	return dst
}

// OnLinkPrefix describes an entry of the prefix list.
type OnLinkPrefix struct {
	Prefix  ipv6.Addr
	Len     uint8
	Expires time.Duration
}

// Prefixes returns the prefix list, appended to dst.
func (n *Node) Prefixes(dst []OnLinkPrefix) []OnLinkPrefix {
	for _, p := range n.prefixes {
		dst = append(dst, OnLinkPrefix{Prefix: p.prefix, Len: p.length, Expires: p.expires})
	}
	return dst
}

// matches reports whether a's first l bits are p's.
func matches(a, p ipv6.Addr, l uint8) bool {
	full, rest := int(l/8), l%8
	for i := range full {
		if a[i] != p[i] {
			return false
		}
	}
	if rest == 0 {
		return true
	}
	mask := byte(0xff) << (8 - rest)
	return a[full]&mask == p[full]&mask
}

// masked returns a with the bits after the first l cleared.
func masked(a ipv6.Addr, l uint8) ipv6.Addr {
	var p ipv6.Addr
	copy(p[:], a[:l/8])
	if r := l % 8; r != 0 {
		p[l/8] = a[l/8] & (0xff << (8 - r))
	}
	return p
}

// OnLink reports whether dst is on-link (RFC 4861 section 5.2): a
// link-local address (RFC 4291 section 2.5.6), or covered by the prefix
// list.
func (n *Node) OnLink(dst ipv6.Addr) bool {
	if dst.IsLinkLocal() {
		return true
	}
	for _, p := range n.prefixes {
		if matches(dst, p.prefix, p.length) {
			return true
		}
	}
	return false
}

// NextHop returns the neighbour to send a packet for dst to (RFC 4861
// section 5.2): dst itself when it is on-link or multicast, else a
// default router (section 6.3.6). The answer is kept in the destination
// cache until a router or prefix change invalidates it. ok is false when
// dst is off-link and there is no default router: the caller answers
// with ICMPv6 destination unreachable, code 0 (no route, RFC 4443
// section 3.1).
func (n *Node) NextHop(now time.Duration, dst ipv6.Addr) (ipv6.Addr, bool) {
	if dst.IsMulticast() {
		return dst, true
	}
	if hop, ok := n.dests[dst]; ok {
		return hop, true
	}
	hop := dst
	if !n.OnLink(dst) {
		r, ok := n.selectRouter()
		if !ok {
			n.stats.NoRoute++
			return ipv6.Addr{}, false
		}
		hop = r
	}
	if len(n.dests) >= n.cfg.MaxDestinations {
		n.flushDestinations()
	}
	n.dests[dst] = hop
	return hop, true
}

// Destinations returns the number of destination cache entries.
func (n *Node) Destinations() int { return len(n.dests) }

// selectRouter chooses a default router (RFC 4861 section 6.3.6): one
// that is reachable or probably reachable (its neighbour entry exists in
// any state but INCOMPLETE), else the next in round-robin order.
func (n *Node) selectRouter() (ipv6.Addr, bool) {
	if len(n.routers) == 0 {
		return ipv6.Addr{}, false
	}
	for _, r := range n.routers {
		if e := n.neigh.lookup(r.addr); e != nil && e.state != Incomplete {
			return r.addr, true
		}
	}
	n.rr = (n.rr + 1) % len(n.routers)
	return n.routers[n.rr].addr, true
}

func (n *Node) flushDestinations() {
	// Every Path's next hop came from the destination cache: it goes
	// with it (and with every router or prefix change, which flush it).
	n.invalidate()
	if len(n.dests) > 0 {
		n.stats.DestinationsFlushed++
		clear(n.dests)
	}
}

func (n *Node) findRouter(a ipv6.Addr) int {
	for i := range n.routers {
		if n.routers[i].addr == a {
			return i
		}
	}
	return -1
}

func (n *Node) removeRouter(now time.Duration, a ipv6.Addr, sink Sink) {
	if i := n.findRouter(a); i >= 0 && !n.routers[i].static {
		n.routers = append(n.routers[:i], n.routers[i+1:]...)
		n.stats.RoutersRemoved++
		n.flushDestinations()
		sink.Notify(now, Event{Kind: EventRouterExpired, Addr: a})
	}
}

// routerAdvert processes a valid Router Advertisement (RFC 4861 section
// 6.3.4; RFC 4862 section 5.5.3 for its autonomous prefixes).
func (n *Node) routerAdvert(now time.Duration, ip IPInfo, ra *RouterAdvert, sink Sink) {
	// Section 6.3.7: "Once the host sends a Router Solicitation, and
	// receives a valid Router Advertisement with a non-zero Router
	// Lifetime, the host MUST desist from sending additional
	// solicitations".
	if ra.RouterLifetime != 0 {
		n.rsLeft, n.rsAt, n.rsWaitDAD = 0, Never, false
	}
	if ra.CurHopLimit != 0 {
		n.curHopLimit = ra.CurHopLimit
	}
	n.managed, n.other = ra.Managed, ra.Other

	// Default router list.
	i := n.findRouter(ip.Src)
	switch {
	case i >= 0 && n.routers[i].static:
		// The configured router stays as configured, whatever its
		// advertisements say of its lifetime (see router.static); the
		// rest of the advertisement applies as from any router.
	case ra.RouterLifetime == 0:
		if i >= 0 {
			n.removeRouter(now, ip.Src, sink)
		}
	case i >= 0:
		n.routers[i].expires = now + time.Duration(ra.RouterLifetime)*time.Second
		n.arm(n.routers[i].expires)
	case len(n.routers) >= n.cfg.MaxRouters:
		n.stats.RoutersDropFull++
	default:
		r := router{addr: ip.Src, expires: now + time.Duration(ra.RouterLifetime)*time.Second}
		n.routers = append(n.routers, r)
		n.stats.RoutersAdded++
		n.flushDestinations()
		n.arm(r.expires)
	}

	// "If the received Reachable Time value is specified, the host
	// SHOULD set its BaseReachableTime variable to the received value.
	// If the new value differs from the previous value, the host SHOULD
	// re-compute a new random ReachableTime value."
	if ra.ReachableTime != 0 {
		base := time.Duration(ra.ReachableTime) * time.Millisecond
		if base != n.baseReachable {
			n.baseReachable = base
			n.drawReachable(now)
		}
	}
	if ra.RetransTimer != 0 {
		n.retrans = time.Duration(ra.RetransTimer) * time.Millisecond
	}

	// "If the advertisement contains a Source Link-Layer Address
	// option, the link-layer address SHOULD be recorded in the Neighbor
	// Cache entry for the router (creating an entry if necessary) and
	// the IsRouter flag in the Neighbor Cache entry MUST be set to
	// TRUE."
	if ra.Options.HasSourceLinkAddr {
		n.learn(now, ip.Src, ra.Options.SourceLinkAddr, sink).isRouter = true
	} else if e := n.neigh.lookup(ip.Src); e != nil {
		e.isRouter = true
	}

	// MTU option: "hosts SHOULD copy the option's value into LinkMTU
	// so long as the value is greater than or equal to the minimum link
	// MTU [IPv6] and does not exceed the maximum LinkMTU value".
	if ra.Options.HasMTU {
		mtu := ra.Options.MTU
		if mtu < 1280 || mtu > uint32(n.cfg.LinkMTU) {
			n.stats.RxMTUIgnored++
		} else if int(mtu) != n.linkMTU {
			n.linkMTU = int(mtu)
			n.stats.LinkMTUChanges++
			sink.Notify(now, Event{Kind: EventLinkMTU})
		}
	}

	for k := range ra.Options.Prefixes {
		n.prefixInfo(now, &ra.Options.Prefixes[k], sink)
	}
}

// prefixInfo processes one prefix information option (RFC 4861 section
// 6.3.4 for on-link determination, RFC 4862 section 5.5.3 for address
// autoconfiguration).
func (n *Node) prefixInfo(now time.Duration, pi *PrefixInfo, sink Sink) {
	// Section 6.3.4: "If the prefix is the link-local prefix, silently
	// ignore the Prefix Information option." RFC 4862 section 5.5.3 c:
	// "If the preferred lifetime is greater than the valid lifetime,
	// silently ignore the Prefix Information option" (Linux's
	// addrconf_prefix_rcv ignores the whole option, on-link flag too).
	if pi.PrefixLen > 128 || pi.Prefix.IsLinkLocal() || pi.PreferredLifetime > pi.ValidLifetime {
		n.stats.RxPrefixesIgnored++
		return
	}
	if pi.OnLink {
		n.onLinkPrefix(now, masked(pi.Prefix, pi.PrefixLen), pi.PrefixLen, pi.ValidLifetime)
	}
	if pi.Autonomous {
		n.autoconf(now, pi, sink)
	}
}

// onLinkPrefix applies an on-link prefix (RFC 4861 section 6.3.4): a new
// prefix with a non-zero valid lifetime is added, a known one has its
// invalidation timer reset, a lifetime of zero times it out now.
func (n *Node) onLinkPrefix(now time.Duration, p ipv6.Addr, l uint8, valid uint32) {
	for i := range n.prefixes {
		e := &n.prefixes[i]
		if e.prefix != p || e.length != l {
			continue
		}
		if e.expires == Never && valid != Infinite && n.staticPrefix(p, l) {
			// A statically configured prefix is not the RA's to expire.
			return
		}
		if valid == 0 {
			n.prefixes = append(n.prefixes[:i], n.prefixes[i+1:]...)
			n.stats.PrefixesExpired++
			n.flushDestinations()
			return
		}
		e.expires = addLifetime(now, valid)
		n.arm(e.expires)
		return
	}
	if valid == 0 {
		return
	}
	if len(n.prefixes) >= n.cfg.MaxPrefixes {
		n.stats.PrefixesDropFull++
		return
	}
	n.prefixes = append(n.prefixes, prefix{prefix: p, length: l, expires: addLifetime(now, valid)})
	n.stats.PrefixesAdded++
	n.flushDestinations()
	n.arm(n.prefixes[len(n.prefixes)-1].expires)
}

// staticPrefix reports whether a static address covers the prefix.
func (n *Node) staticPrefix(p ipv6.Addr, l uint8) bool {
	for i := range n.addrs {
		a := &n.addrs[i]
		if a.Origin == OriginStatic && uint8(a.PrefixLen) == l && masked(a.Addr, l) == p {
			return true
		}
	}
	return false
}

// addLifetime returns now plus a lifetime in seconds, Never for
// Infinite.
func addLifetime(now time.Duration, s uint32) time.Duration {
	d := lifetime(s)
	if d == Never {
		return Never
	}
	return now + d
}

// pollRouters expires routers and prefixes (RFC 4861 sections 6.3.5).
func (n *Node) pollRouters(now time.Duration, sink Sink) time.Duration {
	next := Never
	for i := 0; i < len(n.routers); {
		r := n.routers[i]
		if now >= r.expires {
			n.routers = append(n.routers[:i], n.routers[i+1:]...)
			n.stats.RoutersExpired++
			n.flushDestinations()
			sink.Notify(now, Event{Kind: EventRouterExpired, Addr: r.addr})
			continue
		}
		next = min(next, r.expires)
		i++
	}
	for i := 0; i < len(n.prefixes); {
		p := n.prefixes[i]
		if now >= p.expires {
			n.prefixes = append(n.prefixes[:i], n.prefixes[i+1:]...)
			n.stats.PrefixesExpired++
			n.flushDestinations()
			continue
		}
		next = min(next, p.expires)
		i++
	}
	return next
}

// pollSolicit sends the Router Solicitations of RFC 4861 section 6.3.7:
// up to MaxRtrSolicitations, RtrSolicitationInterval apart, from the
// link-local address once Duplicate Address Detection has assigned it
// (Linux waits for it too), with our link-layer address.
func (n *Node) pollSolicit(now time.Duration, sink Sink) time.Duration {
	if n.rsLeft == 0 || n.rsWaitDAD {
		return Never
	}
	if now < n.rsAt {
		return n.rsAt
	}
	ll, ok := n.linkLocal()
	if !ok {
		// Resumed by addressAssigned.
		n.rsWaitDAD = true
		return Never
	}
	n.rsLeft--
	rs := RouterSolicit{Options: Options{SourceLinkAddr: n.mac, HasSourceLinkAddr: true}}
	dst := ipv6.AllRouters()
	msg := n.buf[:rs.Len()]
	rs.Emit(msg, ll, dst)
	n.stats.TxRouterSolicits++
	n.send(now, sink, ll, dst, HopLimit, linkDst(dst), msg)
	if n.rsLeft == 0 {
		n.rsAt = Never
		return Never
	}
	n.rsAt = now + n.cfg.RtrSolicitationInterval
	return n.rsAt
}
