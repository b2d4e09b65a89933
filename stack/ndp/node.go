package ndp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Never is the deadline Poll returns when no timer is armed, and the
// expiry of what lives forever.
const Never = time.Duration(math.MaxInt64)

// Node is Neighbor Discovery, address autoconfiguration and MLDv2 for
// one IPv6 interface, sans-I/O: every call takes the time, output goes
// through a Sink, and Poll runs the timers and returns the next deadline.
type Node struct {
	cfg Config
	mac ether.Addr
	iid [8]byte
	rnd *rand.Rand
	// buf is the scratch buffer messages are built in (Output.Msg).
	buf []byte

	// Host variables of RFC 4861 section 6.3.2, which Router
	// Advertisements update.
	linkMTU       int
	curHopLimit   uint8
	baseReachable time.Duration
	reachable     time.Duration
	reachableAt   time.Duration // next draw of reachable
	retrans       time.Duration
	managed       bool
	other         bool

	neigh neighbors

	routers  []router
	rr       int // round-robin cursor of section 6.3.6
	prefixes []prefix
	dests    map[ipv6.Addr]ipv6.Addr
	// gen is the generation Paths are checked against (path.go); it
	// starts at 1 so that the zero Path is empty.
	gen uint64

	addrs []address
	// addrHint is the index in addrs of the address findAddr found
	// last: a hint, checked against the address before it is used, so
	// that a removal shifting the slice or a state change can never make
	// it answer wrongly. Output (the source) and input (the destination)
	// both ask about the one address a connection uses, once per packet.
	addrHint int

	rsLeft    int
	rsAt      time.Duration
	rsWaitDAD bool

	mld listener

	started bool
	// spoken says a message went out since Start: a static address
	// added before that is part of the interface's start-up and, when
	// DAD runs, waits a random delay before its first solicitation
	// (RFC 4862 section 5.4.2; AddStatic).
	spoken   bool
	disabled bool
	next     time.Duration // lower bound of the earliest deadline
	stats    Stats
}

// NewNode returns a node for the interface with MAC mac. rnd is the
// source of every random delay (ReachableTime, solicitation and report
// jitter), so that a run is reproducible: the simulator gives a stream
// of its seeded RNG, the live stack any source.
func NewNode(cfg Config, mac ether.Addr, rnd rand.Source) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ndp config: %w", err)
	}
	if rnd == nil {
		return nil, errors.New("ndp: no random source")
	}
	if !mac.IsUnicast() {
		return nil, fmt.Errorf("ndp: MAC %v is not a unicast address", mac)
	}
	n := &Node{
		cfg:           cfg,
		mac:           mac,
		iid:           ipv6.InterfaceIDFromMAC(mac),
		rnd:           rand.New(rnd),
		buf:           make([]byte, cfg.LinkMTU),
		linkMTU:       cfg.LinkMTU,
		baseReachable: cfg.BaseReachableTime,
		retrans:       cfg.RetransTimer,
		dests:         make(map[ipv6.Addr]ipv6.Addr),
		rsAt:          Never,
		next:          Never,
		gen:           1,
	}
	n.neigh.init(cfg)
	n.mld.init()
	n.drawReachable(0)
	return n, nil
}

// Config returns the configuration.
func (n *Node) Config() Config { return n.cfg }

// Stats returns the counters.
func (n *Node) Stats() Stats { return n.stats }

// CountError counts a message the caller dropped with a Parse error.
func (n *Node) CountError(err error) { n.stats.CountError(err) }

// LinkMTU returns the link MTU, LinkMTU unless a Router Advertisement
// lowered it (RFC 4861 section 6.3.4).
func (n *Node) LinkMTU() int { return n.linkMTU }

// CurHopLimit returns the hop limit a Router Advertisement asked for, or
// 0 when none did (the caller's default applies).
func (n *Node) CurHopLimit() uint8 { return n.curHopLimit }

// ReachableTime returns the ReachableTime in use (RFC 4861 section 6.3.2).
func (n *Node) ReachableTime() time.Duration { return n.reachable }

// RetransTimer returns the RetransTimer in use.
func (n *Node) RetransTimer() time.Duration { return n.retrans }

// ManagedOther returns the M and O flags of the last Router
// Advertisement (RFC 4861 section 4.2): DHCPv6 is out of scope, the
// flags are kept for the report.
func (n *Node) ManagedOther() (managed, other bool) { return n.managed, n.other }

// Disabled reports whether IP operation stopped because the link-local
// address formed from the MAC is a duplicate (RFC 4862 section 5.4.5).
func (n *Node) Disabled() bool { return n.disabled }

func (n *Node) arm(t time.Duration) {
	if t < n.next {
		n.next = t
	}
}

// jitter returns a random duration in [0, d).
func (n *Node) jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(n.rnd.Int64N(int64(d)))
}

// drawReachable draws ReachableTime uniformly between MIN_RANDOM_FACTOR
// (0.5) and MAX_RANDOM_FACTOR (1.5) times BaseReachableTime (RFC 4861
// section 6.3.2).
func (n *Node) drawReachable(now time.Duration) {
	b := n.baseReachable
	n.reachable = b/2 + n.jitter(b)
	n.reachableAt = now + n.cfg.ReachableRecompute
}

// Start brings the interface up: it forms the link-local address from
// the MAC (RFC 4862 section 5.3) and starts its Duplicate Address
// Detection after a random delay (section 5.4.2), joins the all-nodes
// group, and schedules the Router Solicitations of RFC 4861 section
// 6.3.7. Static addresses may be added before or after.
func (n *Node) Start(now time.Duration, sink Sink) error {
	if n.started {
		return errors.New("ndp: already started")
	}
	n.started = true
	// All-nodes is joined for good and never reported (RFC 3810
	// section 6).
	if err := n.join(now, ipv6.AllNodes(), now, sink); err != nil {
		return err
	}
	delay := n.jitter(n.cfg.MaxRtrSolicitationDelay)
	if err := n.addAddress(now, ipv6.LinkLocalFromMAC(n.mac), 64, OriginLinkLocal, delay, Never, Never, sink); err != nil {
		return fmt.Errorf("ndp: link-local address: %w", err)
	}
	if r := n.cfg.DefaultRouter; r.IsValid() {
		n.addStaticRouter(ipv6.Addr(r.As16()))
	}
	if n.cfg.MaxRtrSolicitations > 0 {
		n.rsLeft = n.cfg.MaxRtrSolicitations
		n.rsAt = now + n.jitter(n.cfg.MaxRtrSolicitationDelay)
		n.arm(n.rsAt)
	}
	return nil
}

// Input processes an ICMPv6 message of one of the types this package
// handles (RFC 4861 types 133 to 137, MLD 130 to 132 and 143), from its
// type byte, received in the packet ip describes. It validates the
// message (counting a drop by reason) and acts on it.
func (n *Node) Input(now time.Duration, ip IPInfo, msg []byte, sink Sink) {
	if len(msg) < icmpv6.HeaderLen {
		n.stats.RxTruncated++
		return
	}
	var err error
	switch icmpv6.Header(msg).Type() {
	case icmpv6.TypeRouterSolicitation:
		if _, err = ValidateRouterSolicit(ip, msg); err == nil {
			n.stats.RxRouterSolicits++
			n.stats.RxRouterSolicitsIgnored++
		}
	case icmpv6.TypeRouterAdvertisement:
		var ra RouterAdvert
		if ra, err = ValidateRouterAdvert(ip, msg); err == nil {
			n.stats.RxRouterAdverts++
			n.routerAdvert(now, ip, &ra, sink)
		}
	case icmpv6.TypeNeighborSolicitation:
		var ns NeighborSolicit
		if ns, err = ValidateNeighborSolicit(ip, msg); err == nil {
			n.stats.RxNeighborSolicits++
			n.neighborSolicit(now, ip, &ns, sink)
		}
	case icmpv6.TypeNeighborAdvertisement:
		var na NeighborAdvert
		if na, err = ValidateNeighborAdvert(ip, msg); err == nil {
			n.stats.RxNeighborAdverts++
			n.neighborAdvert(now, ip, &na, sink)
		}
	case icmpv6.TypeRedirect:
		var rd Redirect
		if rd, err = ValidateRedirect(ip, msg); err == nil {
			n.stats.RxRedirects++
			n.redirect(now, ip, &rd)
		}
	case icmpv6.TypeMLDQuery:
		var q Query
		if q, err = ValidateQuery(ip, msg); err == nil {
			if q.Version == 1 {
				n.stats.RxQueriesV1++
			} else {
				n.stats.RxQueries++
			}
			n.query(now, &q)
		}
	case icmpv6.TypeMLDv2Report, icmpv6.TypeMLDReport, icmpv6.TypeMLDDone:
		n.stats.RxReports++
	default:
		err = ErrType
	}
	if err != nil {
		n.stats.CountError(err)
	}
}

// redirect counts a valid Redirect. It is not acted on: see doc.go.
func (n *Node) redirect(now time.Duration, ip IPInfo, rd *Redirect) {
	// RFC 4861 section 8.1: "The IP source address of the Redirect is
	// the same as the current first-hop router for the specified ICMP
	// Destination Address."
	if hop, ok := n.dests[rd.Destination]; !ok || hop != ip.Src {
		n.stats.RxRedirectsNotFirstHop++
	}
	n.stats.RxRedirectsIgnored++
}

// Poll runs the timers due at now and returns the next deadline, or
// Never.
func (n *Node) Poll(now time.Duration, sink Sink) time.Duration {
	if now < n.next {
		return n.next
	}
	// Timers armed while the components run (a group joined, a
	// solicitation resumed) lower n.next through arm.
	n.next = Never
	if now >= n.reachableAt {
		n.drawReachable(now)
	}
	next := n.reachableAt
	next = min(next, n.pollNeighbors(now, sink))
	next = min(next, n.pollRouters(now, sink))
	// MLD before addresses: a tentative address's report precedes its
	// Duplicate Address Detection solicitation (RFC 4862 section 5.4.2).
	next = min(next, n.pollMLD(now, sink))
	next = min(next, n.pollAddresses(now, sink))
	next = min(next, n.pollSolicit(now, sink))
	n.next = min(n.next, next)
	return n.next
}

// send hands a message built in n.buf[:len] to the sink.
func (n *Node) send(now time.Duration, sink Sink, src, dst ipv6.Addr, hop uint8, linkDst ether.Addr, msg []byte) {
	n.spoken = true
	sink.SendICMPv6(now, Output{Src: src, Dst: dst, HopLimit: hop, RouterAlert: hop == MLDHopLimit, LinkDst: linkDst, Msg: msg})
}

// linkDst returns the Ethernet destination of a multicast address (RFC
// 2464 section 7).
func linkDst(group ipv6.Addr) ether.Addr { return ether.Addr(group.MulticastMAC()) }
