package iface

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// HeaderRoom6 is the headroom AllocTransport6 guarantees and OutputIPv6
// needs in front of the transport bytes: an Ethernet header and the
// fixed IPv6 header (the stack sends no extension headers of its own).
const HeaderRoom6 = ether.HeaderLen + ipv6.HeaderLen

// v6State is the IPv6 side of an interface (nil when IPv6 is off).
type v6State struct {
	cfg IPv6Config
	// addr is the static address and plen its prefix length.
	addr ipv6.Addr
	plen int
	// ll is the link-local address formed from the MAC.
	ll ipv6.Addr

	node *ndp.Node
	// path is the last destination's next hop and neighbour, a
	// one-entry destination cache in front of the node's maps (Linux's
	// sk_dst_cache, net/ipv6/route.c), checked against the node's
	// generation so that a stale one is never used.
	path  ndp.Path
	rx    *ipv6.Receiver
	errs  *icmpv6.Errors
	pmtu  *ipv6.PMTUCache
	stats Stats6
	// ndpBase and pmtuBase are the node's and the cache's counters at
	// the last ResetStats: both keep their own.
	ndpBase  ndp.Stats
	pmtuBase ipv6.PMTUStats

	fragID uint32
	// secret keys the per-connection flow labels (RFC 6437 section 3).
	secret [16]byte
	// groups and mcast are the groups listened to and their MACs, as
	// the node gave them at the last EventGroupsChanged.
	groups []ipv6.Addr
	mcast  []ether.Addr
	// addrs is scratch for the node's address list.
	addrs []ndp.AddrInfo
	// buf builds ICMPv6 packets (errors, echo replies, ND messages).
	buf []byte
	// disabled: the link-local address is a duplicate (RFC 4862
	// section 5.4.5); IPv6 input and output stop.
	disabled bool
	onEcho   EchoHandler6
	// onPathMTU is told of lowered path MTUs (SetPathMTUHandler6).
	onPathMTU PathMTUHandler6
}

// EchoHandler6 receives ICMPv6 echo replies (for ping -6).
type EchoHandler6 func(now time.Duration, from ipv6.Addr, ident, seq uint16, data []byte)

// MulticastFilter is implemented by a Link whose NIC filters multicast
// frames by destination MAC (rte_eth_dev_set_mc_addr_list): the
// interface loads the group MACs Neighbor Discovery and MLD listen to
// whenever they change, so that solicited-node multicast reaches it.
type MulticastFilter interface {
	SetMulticastMACs(macs []ether.Addr)
}

// newV6 builds the IPv6 side for cfg (defaults filled).
func newV6(cfg Config, mac ether.Addr, rnd rand.Source) (*v6State, error) {
	c := cfg.IPv6
	p, _ := c.prefix()
	v := &v6State{cfg: c, addr: ipv6.Addr(p.Addr().As16()), plen: p.Bits(), buf: make([]byte, ipv6.MaxPayloadLen+ipv6.HeaderLen)}
	v.ll = ipv6.LinkLocalFromMAC(mac)
	var err error
	if v.node, err = ndp.NewNode(c.ND, mac, rnd); err != nil {
		return nil, fmt.Errorf("ipv6.nd: %w", err)
	}
	rc := ipv6.ReceiverConfig{MaxOptions: c.MaxOptions, Reasm: c.Reassembly}
	if v.rx, err = ipv6.NewReceiver(rc, &v.stats.IPv6); err != nil {
		return nil, fmt.Errorf("ipv6: %w", err)
	}
	lim, err := icmpv6.NewLimiter(cfg.ICMPRateLimit)
	if err != nil {
		return nil, fmt.Errorf("icmp_rate_limit: %w", err)
	}
	v.errs = icmpv6.NewErrors(lim, &v.stats.ICMPv6)
	if v.pmtu, err = ipv6.NewPMTUCache(ipv6.PMTUConfig{LinkMTU: cfg.MTU, Expires: c.PMTUExpires, MaxEntries: c.PMTUMaxEntries}); err != nil {
		return nil, fmt.Errorf("ipv6: %w", err)
	}
	r := rand.New(rnd)
	for k := range v.secret {
		v.secret[k] = byte(r.Uint32())
	}
	return v, nil
}

// Stats6 are the counters of the IPv6 side, by layer; Stats holds the
// Ethernet, UDP, TCP and transmit counters both families share.
type Stats6 struct {
	// IPv6 is RFC 4293's ipSystemStats for IPv6 with drops by reason.
	IPv6 ipv6.Stats `json:"ipv6"`
	// Out are IPv6 output failures by reason.
	Out Out6Stats `json:"ipv6_out"`
	// ICMPv6 is RFC 4293's icmpStatsTable for IPv6.
	ICMPv6 icmpv6.Stats `json:"icmpv6"`
	// NDP is Neighbor Discovery's, DAD's and MLD's.
	NDP ndp.Stats `json:"ndp"`
	// PMTU is what Packet Too Big messages did (RFC 8201).
	PMTU ipv6.PMTUStats `json:"pmtu"`
}

// Out6Stats count IPv6 output and the drops on it by reason.
type Out6Stats struct {
	// Requests: packets the transports and ICMPv6 asked to send.
	Requests uint64 `json:"requests"`
	// NoRoutes: off-link with no default router (RFC 4861 section 5.2).
	NoRoutes uint64 `json:"no_routes"`
	// NoSource: no assigned address to send from (DAD not finished,
	// or a duplicate).
	NoSource uint64 `json:"no_source"`
	// BadAddress: an unspecified, loopback or own destination.
	BadAddress uint64 `json:"bad_address"`
	// TooBig: larger than the path MTU with DontFrag (EMSGSIZE).
	TooBig uint64 `json:"too_big"`
	// Discards: dropped for lack of mbufs or headroom, or given up by
	// Neighbor Discovery's queues.
	Discards uint64 `json:"discards"`
	// AddressUnreachable: packets whose next hop did not resolve,
	// returned to their transport as destination unreachable code 3
	// (RFC 4861 section 7.2.2).
	AddressUnreachable uint64 `json:"address_unreachable"`
	// Disabled: packets not sent because the interface's link-local
	// address is a duplicate (RFC 4862 section 5.4.5).
	Disabled uint64 `json:"disabled"`
	// RxDisabled: packets received and dropped for the same reason.
	RxDisabled uint64 `json:"rx_disabled"`
	// RxNotOurs: packets to an address or group we do not have
	// (counted in ipv6.in_addr_errors too).
	RxNotOurs uint64 `json:"rx_not_ours"`
	// RxMulticastFiltered: multicast frames to a group MAC we do not
	// listen to (counted in eth.rx_multicast too).
	RxMulticastFiltered uint64 `json:"rx_multicast_filtered"`
}

// HasIPv4 reports whether the interface has an IPv4 address.
func (i *Interface) HasIPv4() bool { return i.has4 }

// HasIPv6 reports whether IPv6 is on.
func (i *Interface) HasIPv6() bool { return i.v6 != nil }

// Addr6 returns the static IPv6 address (zero when IPv6 is off).
func (i *Interface) Addr6() ipv6.Addr {
	if i.v6 == nil {
		return ipv6.Addr{}
	}
	return i.v6.addr
}

// LinkLocal6 returns the link-local address (zero when IPv6 is off).
func (i *Interface) LinkLocal6() ipv6.Addr {
	if i.v6 == nil {
		return ipv6.Addr{}
	}
	return i.v6.ll
}

// NDP returns Neighbor Discovery's node (nil when IPv6 is off), for
// inspection and static neighbours.
func (i *Interface) NDP() *ndp.Node {
	if i.v6 == nil {
		return nil
	}
	return i.v6.node
}

// Confirm6 is Neighbor Discovery's upper-layer reachability hint for
// neighbour a (RFC 4861 section 7.3.1), through the cached path when it
// points at a (Linux's dst_confirm_neigh, net/core/neighbour.c), so that
// a transport confirming on every acknowledgment needs no lookup.
func (i *Interface) Confirm6(now time.Duration, a ipv6.Addr) {
	if i.v6 != nil {
		i.v6.node.ConfirmPath(now, &i.v6.path, a)
	}
}

// IsAssigned6 reports whether a is an IPv6 address of ours that may be
// used: past Duplicate Address Detection, not a duplicate.
func (i *Interface) IsAssigned6(a ipv6.Addr) bool {
	return i.v6 != nil && !i.v6.disabled && i.v6.node.IsAssigned(a)
}

// MSS6 returns the TCP maximum segment size the link MTU allows over
// IPv6 without options (RFC 9293 section 3.7.1: the MTU less 40 and 20).
func (i *Interface) MSS6() int { return ipv6.MSSForMTU(i.mtu) }

// PathMTU6 returns the path MTU estimate for dst (RFC 8201): the link
// MTU until a Packet Too Big lowers it.
func (i *Interface) PathMTU6(now time.Duration, dst ipv6.Addr) int {
	if i.v6 == nil {
		return i.mtu
	}
	return min(i.v6.pmtu.MTU(now, dst), i.v6.node.LinkMTU())
}

// PathMSS6 returns the TCP MSS the path MTU to dst allows (RFC 8201
// section 5.2: the packetization layer follows the path MTU).
func (i *Interface) PathMSS6(now time.Duration, dst ipv6.Addr) int {
	return ipv6.MSSForMTU(i.PathMTU6(now, dst))
}

// FlowLabel6 returns the flow label of a transport connection (RFC 6437
// section 3): a keyed hash of its 5-tuple under the instance's secret,
// drawn from the interface's seeded source, so a run gives the same
// labels every time.
func (i *Interface) FlowLabel6(src, dst ipv6.Addr, proto uint8, sport, dport uint16) uint32 {
	if i.v6 == nil {
		return 0
	}
	return ipv6.FlowLabel(i.v6.secret, src, dst, proto, sport, dport)
}

// SetEchoHandler6 sets the function that receives ICMPv6 echo replies.
func (i *Interface) SetEchoHandler6(h EchoHandler6) {
	if i.v6 != nil {
		i.v6.onEcho = h
	}
}

// Stats6 returns the IPv6 side's counters since the interface was made
// or since the last ResetStats (zero when IPv6 is off).
func (i *Interface) Stats6() Stats6 {
	v := i.v6
	if v == nil {
		return Stats6{}
	}
	s := v.stats
	s.NDP = countersSince(v.node.Stats(), v.ndpBase)
	s.PMTU = countersSince(v.pmtu.Stats(), v.pmtuBase)
	return s
}

// resetStats6 zeroes the IPv6 counters (ResetStats' rule).
func (v *v6State) resetStats() {
	v.stats = Stats6{}
	v.ndpBase = v.node.Stats()
	v.pmtuBase = v.pmtu.Stats()
}

// start6 brings IPv6 up: the link-local address and its DAD, the
// static address (which goes through DAD too, RFC 4862 section 5.4),
// the all-nodes group and Router Solicitations.
func (i *Interface) start6(now time.Duration) {
	v := i.v6
	sink := i.ndpSink()
	if err := v.node.Start(now, sink); err != nil {
		return // started already
	}
	_ = v.node.AddStatic(now, v.addr, v.plen, sink) // validated by Config
}

// poll6 runs the IPv6 timers: Neighbor Discovery, reassembly and the
// path MTU cache.
func (i *Interface) poll6(now time.Duration) time.Duration {
	v := i.v6
	a := v.node.Poll(now, i.ndpSink())
	r := v.rx.Poll(now, (*reasm6Sink)(i))
	p := v.pmtu.Poll(now)
	return min(a, r, p)
}

// AddNeighbor6 records a's MAC as if Neighbor Discovery had resolved it
// (for scenarios that start with warm neighbours, and tests). It sends
// an unsolicited solicitation-free entry through the node's cache.
func (i *Interface) AddNeighbor6(now time.Duration, a ipv6.Addr, mac ether.Addr) {
	if i.v6 == nil {
		return
	}
	i.v6.node.AddNeighbor(now, a, mac, i.ndpSink())
}
