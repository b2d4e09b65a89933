package ndp

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// State is a neighbour cache entry's reachability state (RFC 4861
// section 7.3.2).
type State uint8

// The states of section 7.3.2.
const (
	stateFree State = iota
	// Incomplete: address resolution is in progress.
	Incomplete
	// Reachable: reachability was confirmed within ReachableTime.
	Reachable
	// Stale: no longer known reachable; nothing is done until a packet
	// is sent.
	Stale
	// Delay: a packet was sent to a Stale entry; waiting
	// DelayFirstProbeTime for an upper-layer confirmation.
	Delay
	// Probe: unicast solicitations are being sent.
	Probe
)

// String returns the state's name as RFC 4861 writes it.
func (s State) String() string {
	switch s {
	case Incomplete:
		return "INCOMPLETE"
	case Reachable:
		return "REACHABLE"
	case Stale:
		return "STALE"
	case Delay:
		return "DELAY"
	case Probe:
		return "PROBE"
	}
	return "NONE"
}

// PendingOverhead is what Linux counts for a queued packet beyond its
// bytes against unres_qlen_bytes: SKB_TRUESIZE of struct sk_buff and
// struct skb_shared_info on x86-64 (as stack/arp).
const PendingOverhead = 576

// pendingPrealloc is the room each entry's queue starts with.
const pendingPrealloc = 16

// neighbor is one entry of the neighbour cache (RFC 4861 section 5.1).
type neighbor struct {
	addr     ipv6.Addr
	mac      ether.Addr
	state    State
	isRouter bool
	probes   int           // solicitations sent in this INCOMPLETE or PROBE
	deadline time.Duration // per state: retransmit, ReachableTime, DELAY end
	pending  []*hw.Mbuf
	// pendingBytes is pending's size as PendingBytesPerDest counts it.
	pendingBytes int
}

// neighbors is the cache: a fixed table, an index, a free list.
type neighbors struct {
	entries []neighbor
	index   map[ipv6.Addr]int32
	free    []int32
	pending int // queued packets over all entries
}

func (t *neighbors) init(cfg Config) {
	t.entries = make([]neighbor, cfg.MaxNeighbors)
	t.index = make(map[ipv6.Addr]int32, cfg.MaxNeighbors)
	t.free = make([]int32, 0, cfg.MaxNeighbors)
	for i := cfg.MaxNeighbors - 1; i >= 0; i-- {
		t.entries[i].pending = make([]*hw.Mbuf, 0, min(cfg.PendingPerDest, pendingPrealloc))
		t.free = append(t.free, int32(i))
	}
}

func (t *neighbors) lookup(a ipv6.Addr) *neighbor {
	if i, ok := t.index[a]; ok {
		return &t.entries[i]
	}
	return nil
}

// NeighborInfo describes a neighbour cache entry.
type NeighborInfo struct {
	Addr     ipv6.Addr
	MAC      ether.Addr
	State    State
	IsRouter bool
}

// Neighbor returns the cache entry for a, without side effects.
func (n *Node) Neighbor(a ipv6.Addr) (NeighborInfo, bool) {
	e := n.neigh.lookup(a)
	if e == nil {
		return NeighborInfo{}, false
	}
	return NeighborInfo{Addr: e.addr, MAC: e.mac, State: e.state, IsRouter: e.isRouter}, true
}

// Neighbors returns the number of entries in use.
func (n *Node) Neighbors() int { return len(n.neigh.entries) - len(n.neigh.free) }

// Pending returns the number of packets waiting for resolution.
func (n *Node) Pending() int { return n.neigh.pending }

// Resolve finds the link-layer address of next hop a for packet m (RFC
// 4861 section 7.2.2 and the "send packet" events of section 7.3.3 and
// appendix C). When it is known it returns it and true and the caller
// sends m; a STALE entry moves to DELAY. Otherwise the node has taken m:
// it waits in the entry's queue (a solicitation was sent if resolution
// starts now) or was dropped through sink.DropPending when the queues are
// full, counted. A multicast a maps to its group MAC (RFC 2464 section
// 7) without the cache.
func (n *Node) Resolve(now time.Duration, a ipv6.Addr, m *hw.Mbuf, sink Sink) (ether.Addr, bool) {
	mac, _, ok := n.resolve(now, a, m, sink)
	return mac, ok
}

// resolve is Resolve, also returning the index of a's entry (-1 for a
// multicast a).
func (n *Node) resolve(now time.Duration, a ipv6.Addr, m *hw.Mbuf, sink Sink) (ether.Addr, int32, bool) {
	if a.IsMulticast() {
		return linkDst(a), -1, true
	}
	i, ok := n.neigh.index[a]
	if !ok {
		e := n.alloc(a, sink)
		n.stats.NeighborsCreated++
		e.state = Incomplete
		e.probes = 0
		n.solicit(now, e, false, sink)
		n.enqueue(e, m, sink)
		return ether.Addr{}, -1, false
	}
	e := &n.neigh.entries[i]
	switch e.state {
	case Incomplete:
		n.enqueue(e, m, sink)
		return ether.Addr{}, i, false
	case Reachable:
		if now < e.deadline {
			return e.mac, i, true
		}
		// ReachableTime passed and Poll has not swept it yet.
		n.stats.ToStale++
		e.state = Stale
		fallthrough
	case Stale:
		// Section 7.3.3: "The first time a node sends a packet to a
		// neighbor whose entry is STALE, the sender changes the state to
		// DELAY and sets a timer to expire in DELAY_FIRST_PROBE_TIME".
		e.state = Delay
		e.deadline = now + n.cfg.DelayFirstProbeTime
		n.arm(e.deadline)
	}
	return e.mac, i, true
}

// Confirm records an upper-layer reachability confirmation for neighbour
// a (RFC 4861 section 7.3.1: "new non-duplicate acknowledgments" of TCP,
// for example): an entry other than INCOMPLETE becomes REACHABLE.
func (n *Node) Confirm(now time.Duration, a ipv6.Addr) {
	if e := n.neigh.lookup(a); e != nil {
		n.confirmEntry(now, e)
	}
}

// confirmEntry is Confirm for entry e.
func (n *Node) confirmEntry(now time.Duration, e *neighbor) {
	if e.state == Incomplete {
		return
	}
	n.stats.Confirmations++
	n.reachableNow(now, e)
}

func (n *Node) reachableNow(now time.Duration, e *neighbor) {
	e.state = Reachable
	e.probes = 0
	e.deadline = now + n.reachable
	n.arm(e.deadline)
}

// solicit sends a Neighbor Solicitation for e (RFC 4861 section 7.2.2):
// to the solicited-node group of the target while resolving, to the
// cached address when probing (section 7.3.3), with our link-layer
// address, and arms the retransmission.
func (n *Node) solicit(now time.Duration, e *neighbor, unicast bool, sink Sink) {
	e.probes++
	e.deadline = now + n.retrans
	n.arm(e.deadline)
	src, ok := n.sourceFor(e.addr)
	if !ok {
		n.stats.TxNoSource++
		return
	}
	dst, ldst := e.addr.SolicitedNode(), linkDst(e.addr.SolicitedNode())
	if unicast {
		dst, ldst = e.addr, e.mac
		n.stats.TxProbes++
	} else {
		n.stats.TxNeighborSolicits++
	}
	ns := NeighborSolicit{Target: e.addr, Options: Options{SourceLinkAddr: n.mac, HasSourceLinkAddr: true}}
	msg := n.buf[:ns.Len()]
	ns.Emit(msg, src, dst)
	n.send(now, sink, src, dst, HopLimit, ldst, msg)
}

func (n *Node) enqueue(e *neighbor, m *hw.Mbuf, sink Sink) {
	size := m.PktLen + PendingOverhead
	switch {
	case len(e.pending) >= n.cfg.PendingPerDest || e.pendingBytes+size > n.cfg.PendingBytesPerDest:
		n.stats.PendingDropDestFull++
		sink.DropPending(m)
	case n.neigh.pending >= n.cfg.PendingTotal:
		n.stats.PendingDropTotalFull++
		sink.DropPending(m)
	default:
		e.pending = append(e.pending, m)
		e.pendingBytes += size
		n.neigh.pending++
		n.stats.PendingQueued++
	}
}

// flushPending sends what waited for e now that its address is known.
func (n *Node) flushPending(now time.Duration, e *neighbor, sink Sink) {
	for j, m := range e.pending {
		n.stats.PendingSent++
		e.pending[j] = nil
		sink.SendPending(now, m, e.mac)
	}
	n.neigh.pending -= len(e.pending)
	e.pending = e.pending[:0]
	e.pendingBytes = 0
}

// alloc takes a free entry for a, evicting one when the table is full:
// a STALE entry first (nothing waits on it and it may be re-learnt), then
// any resolved entry, then the oldest resolution.
func (n *Node) alloc(a ipv6.Addr, sink Sink) *neighbor {
	t := &n.neigh
	if len(t.free) == 0 {
		victim, rank := -1, 0
		for i := range t.entries {
			e := &t.entries[i]
			r := 1
			switch e.state {
			case Stale:
				r = 3
			case Reachable, Delay, Probe:
				r = 2
			}
			if r > rank || (r == rank && e.deadline < t.entries[victim].deadline) {
				victim, rank = i, r
			}
		}
		n.stats.Evicted++
		n.release(int32(victim), sink, &n.stats.PendingDropEvicted, false, 0)
	}
	i := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	e := &t.entries[i]
	e.addr = a
	t.index[a] = i
	n.invalidate()
	return e
}

// release frees entry i. Its waiting packets go to AddressUnreachable
// when unreachable is set (a failed resolution), else are dropped into
// counter.
func (n *Node) release(i int32, sink Sink, counter *uint64, unreachable bool, now time.Duration) {
	t := &n.neigh
	e := &t.entries[i]
	for j, m := range e.pending {
		*counter++
		if unreachable {
			sink.AddressUnreachable(now, m)
		} else {
			sink.DropPending(m)
		}
		e.pending[j] = nil
	}
	t.pending -= len(e.pending)
	if e.isRouter {
		// Section 7.3.3: destinations that used this router must run
		// next-hop determination again.
		n.flushDestinations()
	}
	delete(t.index, e.addr)
	n.invalidate()
	pend := e.pending[:0]
	*e = neighbor{pending: pend}
	t.free = append(t.free, i)
}

// learn records mac for a from a message that carries a source
// link-layer address option (a Neighbor Solicitation, RFC 4861 section
// 7.2.3; a Router Advertisement, section 6.3.4): a new entry is STALE, a
// changed address makes the entry STALE, an INCOMPLETE entry becomes
// STALE and sends what waited (appendix C).
func (n *Node) learn(now time.Duration, a ipv6.Addr, mac ether.Addr, sink Sink) *neighbor {
	e := n.neigh.lookup(a)
	switch {
	case e == nil:
		e = n.alloc(a, sink)
		n.stats.NeighborsCreated++
		e.mac, e.state = mac, Stale
	case e.state == Incomplete:
		n.stats.Resolved++
		e.mac, e.state = mac, Stale
		n.invalidate()
		n.flushPending(now, e, sink)
	case e.mac != mac:
		n.stats.LinkAddrChanges++
		e.mac, e.state = mac, Stale
		n.invalidate()
	}
	return e
}

// neighborAdvert processes a valid Neighbor Advertisement (RFC 4861
// section 7.2.5, appendix C; RFC 4862 section 5.4.4 for our own
// addresses).
func (n *Node) neighborAdvert(now time.Duration, ip IPInfo, na *NeighborAdvert, sink Sink) {
	if i := n.findAddr(na.Target); i >= 0 {
		if n.addrs[i].State == AddrTentative {
			n.duplicate(now, i, sink)
		} else {
			n.stats.RxAddrConflicts++
		}
		return
	}
	e := n.neigh.lookup(na.Target)
	if e == nil {
		n.stats.RxAdvertsUnknown++
		return
	}
	o := &na.Options
	if e.state == Incomplete {
		if !o.HasTargetLinkAddr {
			n.stats.RxAdvertsNoLinkAddr++
			return
		}
		n.stats.Resolved++
		e.mac = o.TargetLinkAddr
		n.invalidate()
		if na.Solicited {
			n.reachableNow(now, e)
		} else {
			e.state = Stale
		}
		n.setRouter(now, e, na.Router, sink)
		n.flushPending(now, e, sink)
		return
	}
	differs := o.HasTargetLinkAddr && o.TargetLinkAddr != e.mac
	if !na.Override && differs {
		// "If the Override flag is clear and the supplied link-layer
		// address differs from that in the cache, then one of two
		// actions takes place: a. If the state of the entry is
		// REACHABLE, set it to STALE, but do not update the entry in
		// any other way. b. Otherwise, the received advertisement should
		// be ignored".
		if e.state == Reachable {
			e.state = Stale
		}
		return
	}
	if differs {
		n.stats.LinkAddrChanges++
		e.mac = o.TargetLinkAddr
		n.invalidate()
	}
	switch {
	case na.Solicited:
		n.reachableNow(now, e)
	case differs:
		e.state = Stale
	}
	n.setRouter(now, e, na.Router, sink)
}

// setRouter updates IsRouter from an advertisement's R flag; a router
// that says it no longer is one leaves the default router list (RFC 4861
// section 7.2.5).
func (n *Node) setRouter(now time.Duration, e *neighbor, isRouter bool, sink Sink) {
	if e.isRouter && !isRouter {
		n.removeRouter(now, e.addr, sink)
		n.flushDestinations()
	}
	if e.isRouter != isRouter {
		n.invalidate()
	}
	e.isRouter = isRouter
}

// neighborSolicit processes a valid Neighbor Solicitation (RFC 4861
// section 7.2.3; RFC 4862 sections 5.4.3 for our tentative addresses).
func (n *Node) neighborSolicit(now time.Duration, ip IPInfo, ns *NeighborSolicit, sink Sink) {
	i := n.findAddr(ns.Target)
	if i < 0 {
		n.stats.RxSolicitsNotForUs++
		return
	}
	switch n.addrs[i].State {
	case AddrTentative:
		if ip.Src.IsUnspecified() {
			// Another node is performing Duplicate Address Detection
			// for the same address (RFC 4862 section 5.4.3).
			n.duplicate(now, i, sink)
		} else {
			// Address resolution for an address that is not yet ours:
			// "MUST NOT respond" (section 5.4.3).
			n.stats.RxSolicitsForTentative++
		}
		return
	case AddrDuplicate:
		n.stats.RxSolicitsNotForUs++
		return
	}
	na := NeighborAdvert{Override: true, Target: ns.Target, Options: Options{TargetLinkAddr: n.mac, HasTargetLinkAddr: true}}
	if ip.Src.IsUnspecified() {
		// A node performing DAD for our address: answer to all-nodes
		// with Solicited clear (RFC 4861 section 7.2.4), which makes its
		// DAD fail.
		dst := ipv6.AllNodes()
		n.stats.TxNeighborAdverts++
		msg := n.buf[:na.Len()]
		na.Emit(msg, ns.Target, dst)
		n.send(now, sink, ns.Target, dst, HopLimit, linkDst(dst), msg)
		return
	}
	var mac ether.Addr
	if ns.Options.HasSourceLinkAddr {
		e := n.learn(now, ip.Src, ns.Options.SourceLinkAddr, sink)
		mac = e.mac
	} else if e := n.neigh.lookup(ip.Src); e != nil && e.state != Incomplete {
		mac = e.mac
	} else {
		// A unicast solicitation without our peer's link-layer address
		// and no entry for it: resolve it; the peer retransmits.
		n.stats.TxAdvertsUnresolved++
		if e == nil {
			e = n.alloc(ip.Src, sink)
			n.stats.NeighborsCreated++
			e.state = Incomplete
			n.solicit(now, e, false, sink)
		}
		return
	}
	na.Solicited = true
	n.stats.TxNeighborAdverts++
	msg := n.buf[:na.Len()]
	na.Emit(msg, ns.Target, ip.Src)
	n.send(now, sink, ns.Target, ip.Src, HopLimit, mac, msg)
}

// pollNeighbors runs the cache's timers (RFC 4861 section 7.3.3).
func (n *Node) pollNeighbors(now time.Duration, sink Sink) time.Duration {
	next := Never
	for i := range n.neigh.entries {
		e := &n.neigh.entries[i]
		if e.state == stateFree || e.state == Stale {
			continue
		}
		if now < e.deadline {
			next = min(next, e.deadline)
			continue
		}
		switch e.state {
		case Incomplete:
			if e.probes >= n.cfg.MaxMulticastSolicit {
				n.stats.ResolutionsFailed++
				n.release(int32(i), sink, &n.stats.PendingUnreachable, true, now)
				continue
			}
			n.solicit(now, e, false, sink)
		case Reachable:
			n.stats.ToStale++
			e.state = Stale
			continue
		case Delay:
			e.state = Probe
			e.probes = 0
			n.solicit(now, e, true, sink)
		case Probe:
			if e.probes >= n.cfg.MaxUnicastSolicit {
				n.stats.NUDFailed++
				n.release(int32(i), sink, &n.stats.PendingDropFlushed, false, now)
				continue
			}
			n.solicit(now, e, true, sink)
		}
		next = min(next, e.deadline)
	}
	return next
}

// Flush drops every neighbour entry and every waiting packet (counted as
// flushed), for an interface going down.
func (n *Node) Flush(sink Sink) {
	for i := range n.neigh.entries {
		if n.neigh.entries[i].state != stateFree {
			n.release(int32(i), sink, &n.stats.PendingDropFlushed, false, 0)
		}
	}
}
