package ndp

import (
	"errors"
	"time"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// maxQuerySources bounds the sources a pending Multicast Address and
// Source Specific response records; beyond it the response becomes a
// group-specific one, which reports a superset (counted).
const maxQuerySources = 64

// group is a multicast group the interface listens to, in EXCLUDE mode
// with no sources: every source (RFC 3810 section 4; a host stack's
// joins and solicited-node groups are all of this kind).
type group struct {
	addr ipv6.Addr
	refs int
	// leaving: refs reached zero; the entry stays until its
	// TO_IN({}) retransmissions are sent.
	leaving bool
	// State change report still to send and when (RFC 3810 section
	// 6.1).
	changeLeft int
	changeAt   time.Duration
	// Pending answer to a specific query (section 6.2), Never if none;
	// sources non-empty for a source-specific one.
	queryAt time.Duration
	sources []ipv6.Addr
}

// listener is the MLDv2 host side (RFC 3810 section 6) of the interface.
type listener struct {
	groups []group
	// generalAt is the interface timer: the pending answer to a General
	// Query (section 6.2), Never if none.
	generalAt time.Duration
	// v1Until ends MLDv1 compatibility mode (section 8.2.1).
	v1Until time.Duration
	records []AddressRecord // scratch
}

func (l *listener) init() {
	l.generalAt = Never
}

func (l *listener) find(a ipv6.Addr) int {
	for i := range l.groups {
		if l.groups[i].addr == a {
			return i
		}
	}
	return -1
}

// reportable reports whether MLD messages are ever sent about a: never
// for the link-scope all-nodes address, nor for scopes 0 and 1 (RFC 3810
// section 6: "No MLD messages are ever sent regarding neither the
// link-scope all-nodes multicast address, nor any multicast address of
// scope 0 (reserved) or 1 (node-local)").
func reportable(a ipv6.Addr) bool {
	return a != ipv6.AllNodes() && a[1]&0x0f > 1
}

// Join makes the interface listen to group g, counted per caller: each
// Join needs a Leave. The first join of a group is announced with a
// state change report, CHANGE_TO_EXCLUDE_MODE with no sources, sent now
// and Robustness-1 more times (RFC 3810 section 6.1), and reported to
// the caller as EventGroupsChanged.
func (n *Node) Join(now time.Duration, g ipv6.Addr, sink Sink) error {
	if !g.IsMulticast() {
		return errors.New("ndp: join: " + g.String() + " is not a multicast address")
	}
	return n.join(now, g, now, sink)
}

// Leave undoes a Join. The last leave sends CHANGE_TO_INCLUDE_MODE with
// no sources, Robustness times (section 6.1).
func (n *Node) Leave(now time.Duration, g ipv6.Addr, sink Sink) {
	n.leave(now, g, sink)
}

// join adds a reference to g; the first one's report goes at reportAt.
func (n *Node) join(now time.Duration, g ipv6.Addr, reportAt time.Duration, sink Sink) error {
	l := &n.mld
	i := l.find(g)
	if i >= 0 && !l.groups[i].leaving {
		l.groups[i].refs++
		return nil
	}
	if i < 0 {
		if len(l.groups) >= n.cfg.MaxGroups {
			n.stats.GroupsDropFull++
			return errors.New("ndp: group list full (max_groups)")
		}
		l.groups = append(l.groups, group{addr: g, queryAt: Never})
		i = len(l.groups) - 1
	}
	gr := &l.groups[i]
	gr.refs, gr.leaving = 1, false
	n.stats.GroupsJoined++
	if reportable(g) {
		gr.changeLeft, gr.changeAt = n.cfg.Robustness, reportAt
		n.arm(reportAt)
	}
	sink.Notify(now, Event{Kind: EventGroupsChanged, Addr: g})
	return nil
}

// leave drops a reference to g.
func (n *Node) leave(now time.Duration, g ipv6.Addr, sink Sink) {
	l := &n.mld
	i := l.find(g)
	if i < 0 || l.groups[i].leaving {
		return
	}
	gr := &l.groups[i]
	if gr.refs--; gr.refs > 0 {
		return
	}
	n.stats.GroupsLeft++
	if reportable(g) {
		gr.leaving = true
		gr.changeLeft, gr.changeAt = n.cfg.Robustness, now
		gr.queryAt, gr.sources = Never, gr.sources[:0]
		n.arm(now)
	} else {
		l.groups = append(l.groups[:i], l.groups[i+1:]...)
	}
	sink.Notify(now, Event{Kind: EventGroupsChanged, Addr: g})
}

// Groups returns the groups the interface listens to (all-nodes, the
// solicited-node group of each address, and those joined), appended to
// dst.
func (n *Node) Groups(dst []ipv6.Addr) []ipv6.Addr {
	for i := range n.mld.groups {
		if !n.mld.groups[i].leaving {
			dst = append(dst, n.mld.groups[i].addr)
		}
	}
	return dst
}

// MulticastMACs returns the Ethernet group addresses the NIC's multicast
// filter must accept for Groups (RFC 2464 section 7: 33:33 and the low
// 32 bits), each once, appended to dst.
func (n *Node) MulticastMACs(dst []ether.Addr) []ether.Addr {
	start := len(dst)
outer:
	for i := range n.mld.groups {
		g := &n.mld.groups[i]
		if g.leaving {
			continue
		}
		mac := linkDst(g.addr)
		for _, m := range dst[start:] {
			if m == mac {
				continue outer
			}
		}
		dst = append(dst, mac)
	}
	return dst
}

// v1Mode reports whether MLDv1 compatibility mode is on (RFC 3810
// section 8.2.1).
func (n *Node) v1Mode(now time.Duration) bool { return now < n.mld.v1Until }

// query processes a valid query (RFC 3810 section 6.2, and section 8.2.1
// for an MLDv1 one).
func (n *Node) query(now time.Duration, q *Query) {
	l := &n.mld
	if q.Version == 1 {
		if !n.v1Mode(now) {
			// "Whenever a host changes its compatibility mode, it
			// cancels all its pending response and retransmission
			// timers."
			n.stats.V1ModeEntered++
			l.generalAt = Never
			for i := range l.groups {
				l.groups[i].changeLeft = 0
				l.groups[i].queryAt, l.groups[i].sources = Never, l.groups[i].sources[:0]
			}
		}
		// The mode ends by the clock (v1Mode): no timer to arm.
		l.v1Until = now + n.cfg.OlderVersionQuerierTimeout
	}
	at := now + n.jitter(q.MaxRespDelay)
	// Rule 1: "If there is a pending response to a previous General
	// Query scheduled sooner than the selected delay, no additional
	// response needs to be scheduled."
	if l.generalAt <= at {
		return
	}
	if q.IsGeneral() {
		// Rule 2: the interface timer answers it; an earlier pending
		// general response was handled by rule 1.
		l.generalAt = at
		n.arm(at)
		return
	}
	i := l.find(q.Group)
	if i < 0 || l.groups[i].leaving || !reportable(q.Group) {
		n.stats.RxQueriesNotJoined++
		return
	}
	g := &l.groups[i]
	switch {
	case g.queryAt == Never:
		// Rule 3: schedule a report for this address.
		g.queryAt = at
		g.sources = append(g.sources[:0], q.Sources...)
	case len(q.Sources) == 0 || len(g.sources) == 0:
		// Rule 4: a specific query, or a pending one without sources:
		// the source list is cleared, one response at the earlier time.
		g.sources = g.sources[:0]
		g.queryAt = min(g.queryAt, at)
	default:
		// Rule 5: the new sources join the recorded ones.
		g.sources = append(g.sources, q.Sources...)
		g.queryAt = min(g.queryAt, at)
	}
	if len(g.sources) > maxQuerySources {
		n.stats.QuerySourcesOverflow++
		g.sources = g.sources[:0]
	}
	n.arm(g.queryAt)
}

// pollMLD sends what is due: state change reports (section 6.1),
// current-state reports answering queries (section 6.3).
func (n *Node) pollMLD(now time.Duration, sink Sink) time.Duration {
	l := &n.mld
	next := Never
	recs := l.records[:0]
	general := l.generalAt <= now
	if general {
		l.generalAt = Never
	}
	for i := 0; i < len(l.groups); {
		g := &l.groups[i]
		if g.changeLeft > 0 && g.changeAt <= now {
			t := ChangeToExclude
			if g.leaving {
				t = ChangeToInclude
			}
			recs = append(recs, AddressRecord{Type: t, Group: g.addr})
			g.changeLeft--
			// "[Robustness Variable] - 1 more times, at intervals
			// chosen at random from the range (0, [Unsolicited Report
			// Interval])."
			g.changeAt = now + 1 + n.jitter(n.cfg.UnsolicitedReportInterval)
		}
		if g.leaving && g.changeLeft == 0 {
			l.groups = append(l.groups[:i], l.groups[i+1:]...)
			continue
		}
		if !g.leaving && reportable(g.addr) {
			switch {
			case general:
				recs = append(recs, AddressRecord{Type: ModeIsExclude, Group: g.addr})
				g.queryAt = Never
			case g.queryAt <= now:
				// Section 6.3: for an EXCLUDE({}) listener a specific
				// query is answered IS_EX({}), a source-specific one
				// IS_IN(the queried sources).
				if len(g.sources) == 0 {
					recs = append(recs, AddressRecord{Type: ModeIsExclude, Group: g.addr})
				} else {
					recs = append(recs, AddressRecord{Type: ModeIsInclude, Group: g.addr, Sources: g.sources})
				}
				g.queryAt = Never
			}
		}
		if g.changeLeft > 0 {
			next = min(next, g.changeAt)
		}
		next = min(next, g.queryAt)
		i++
	}
	if len(recs) > 0 {
		n.sendRecords(now, recs, sink)
	}
	for i := range l.groups {
		if l.groups[i].queryAt == Never {
			l.groups[i].sources = l.groups[i].sources[:0]
		}
	}
	clear(recs)
	l.records = recs[:0]
	return next
}

// mldSource is the source of MLD messages: the link-local address, or
// the unspecified address before one is assigned (RFC 3810 section
// 5.2.13; RFC 3590).
func (n *Node) mldSource() ipv6.Addr {
	ll, _ := n.linkLocal()
	return ll
}

// sendRecords sends recs as MLDv2 reports to ff02::16 (RFC 3810 section
// 5.2.14), as many as the link MTU needs (section 5.2.15), or in MLDv1
// compatibility mode as one MLDv1 report or done per record.
func (n *Node) sendRecords(now time.Duration, recs []AddressRecord, sink Sink) {
	src := n.mldSource()
	if n.v1Mode(now) {
		for i := range recs {
			r := &recs[i]
			t, dst := icmpv6.TypeMLDReport, r.Group
			if r.Type == ChangeToInclude {
				// RFC 2710 section 4: a Done goes to all-routers.
				t, dst = icmpv6.TypeMLDDone, ipv6.AllRouters()
				n.stats.TxDonesV1++
			} else {
				n.stats.TxReportsV1++
			}
			msg := emitV1(n.buf, t, r.Group, src, dst)
			n.send(now, sink, src, dst, MLDHopLimit, linkDst(dst), msg)
		}
		return
	}
	// IPv6 header and the Hop-by-Hop header of RouterAlertHopByHop.
	room := n.linkMTU - 40 - 8
	dst := ipv6.AllMLDv2Routers()
	for len(recs) > 0 {
		size, k := ReportHeaderLen, 0
		for k < len(recs) && size+recordLen(&recs[k]) <= room {
			size += recordLen(&recs[k])
			k++
		}
		if k == 0 {
			// One record too big for the MTU: only a source list can
			// make it so; send it group-wide instead.
			recs[0].Sources = nil
			continue
		}
		r := Report{Records: recs[:k]}
		msg := n.buf[:r.Len()]
		r.Emit(msg, src, dst)
		n.stats.TxReports++
		n.send(now, sink, src, dst, MLDHopLimit, linkDst(dst), msg)
		recs = recs[k:]
	}
}
