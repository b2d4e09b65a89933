package ndp

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Path caches, for one destination, what output would otherwise look
// up per packet: the next hop (the destination cache, RFC 4861 section
// 5.1) and the next hop's neighbour entry and link-layer address. It is
// Linux's dst_entry with its neighbour (net/ipv6/route.c keeps one in
// the socket, sk_dst_cache, checked against a cookie; net/core/
// neighbour.c's neigh_confirm and dst_confirm_neigh stamp the neighbour
// the route points at). A Path is valid only while the node's
// generation, which every neighbour, router and prefix change bumps, is
// the one it was filled at, so a stale Path is never used: it is filled
// again through the maps. The zero Path is empty. A Path belongs to one
// Node.
type Path struct {
	dst, next ipv6.Addr
	// gen is the node generation the Path was filled at; 0 (never a
	// node's) is empty.
	gen uint64
	// idx is next's neighbour entry, -1 until a resolution found it.
	idx int32
	// mac is the entry's link-layer address when idx was set.
	mac ether.Addr
}

// Generation returns the node's route and neighbour generation: it
// changes whenever a neighbour entry is created, released or changes
// link-layer address, and whenever the default router list, the prefix
// list or the destination cache change.
func (n *Node) Generation() uint64 { return n.gen }

// invalidate bumps the generation, so that every Path is filled again.
func (n *Node) invalidate() { n.gen++ }

// NextHopPath is NextHop through p: when p holds dst at the current
// generation it answers from p, else it asks NextHop and fills p. The
// answer is NextHop's, with NextHop's side effects (a destination cache
// entry that stays until a generation change), so every counter moves
// as before.
func (n *Node) NextHopPath(now time.Duration, p *Path, dst ipv6.Addr) (ipv6.Addr, bool) {
	if p.gen == n.gen && p.dst == dst {
		return p.next, true
	}
	next, ok := n.NextHop(now, dst)
	if !ok {
		*p = Path{}
		return next, false
	}
	*p = Path{dst: dst, next: next, gen: n.gen, idx: -1}
	return next, true
}

// CachedNextHop answers NextHopPath from p alone: the next hop p holds
// for dst at the current generation, or false when p holds no answer
// for dst (the caller then asks NextHopPath). It neither fills p nor
// counts anything, so a caller may try it before the checks it ran when
// p was filled (stack/iface's route6 refuses our own and unspecified
// destinations before it asks NextHopPath: a dst p holds passed them).
func (n *Node) CachedNextHop(p *Path, dst ipv6.Addr) (ipv6.Addr, bool) {
	if p.gen == n.gen && p.dst == dst {
		return p.next, true
	}
	return ipv6.Addr{}, false
}

// ResolvePath is Resolve through p for next hop a: a REACHABLE entry
// within its ReachableTime (the case where Resolve only reads the entry)
// is answered from p without a lookup; every other case runs Resolve
// and, when it answers and p holds a at the current generation, records
// the entry in p.
func (n *Node) ResolvePath(now time.Duration, p *Path, a ipv6.Addr, m *hw.Mbuf, sink Sink) (ether.Addr, bool) {
	cur := p.gen == n.gen && p.next == a
	if cur && p.idx >= 0 {
		if e := &n.neigh.entries[p.idx]; e.state == Reachable && now < e.deadline {
			return p.mac, true
		}
	}
	mac, idx, ok := n.resolve(now, a, m, sink)
	if ok && cur && idx >= 0 && p.gen == n.gen {
		p.idx, p.mac = idx, mac
	}
	return mac, ok
}

// ConfirmPath is Confirm through p for neighbour a: when p's entry is
// a's at the current generation it is confirmed without a lookup (as
// dst_confirm_neigh), else Confirm looks a up. The entry's state and
// deadline move exactly as Confirm moves them.
func (n *Node) ConfirmPath(now time.Duration, p *Path, a ipv6.Addr) {
	if p.gen == n.gen && p.idx >= 0 && p.next == a {
		n.confirmEntry(now, &n.neigh.entries[p.idx])
		return
	}
	n.Confirm(now, a)
}
