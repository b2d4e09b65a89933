package iface

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// Never is the deadline Poll returns when no timer is armed.
const Never = ipv4.Never

// HeaderRoom is the headroom AllocTransport guarantees and OutputIPv4
// needs in front of the transport bytes: an Ethernet header and an IPv4
// header without options.
const HeaderRoom = ether.HeaderLen + ipv4.MinHeaderLen

// Interface is one stack instance's network layer over one queue pair.
type Interface struct {
	cfg   Config
	link  Link
	txOff hw.TxOffloads
	meter hw.Meter

	ip, mask, bcast, gw [4]byte
	hasGW               bool
	// has4 says the interface has an IPv4 address; v6 is its IPv6
	// side, nil when IPv6 is off.
	has4 bool
	v6   *v6State
	mac  ether.Addr
	mtu  int

	arp     *arp.Cache
	reasm   *ipv4.Reassembler
	limiter *icmp.Limiter

	ipID      uint16
	handlers  [256]TransportHandler
	onEcho    EchoHandler
	udp       map[uint16]*UDPSocket
	ephemeral int

	// scratch builds datagrams too large for one mbuf before they are
	// fragmented (reassembled echo requests, large UDP sends).
	scratch []byte

	stats Stats
	// arpBase is the ARP cache's counters at the last ResetStats: the
	// cache keeps its own, and Stats reports them since then.
	arpBase arp.Stats
}

// New returns an interface for cfg sending through link. The MAC must be
// set (the runtime copies the port's). IPv6's random delays and flow
// label secret come from a fixed source; NewWithRand takes the run's.
func New(cfg Config, link Link) (*Interface, error) {
	return NewWithRand(cfg, link, rand.NewPCG(0x5a7a, 0x6e6e))
}

// NewWithRand is New with rnd as the source of IPv6's randomness
// (Neighbor Discovery's jitter, RFC 4861 section 6.3.2; the flow label
// secret, RFC 6437), so that a seeded run is reproducible.
func NewWithRand(cfg Config, link Link, rnd rand.Source) (*Interface, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("iface config: %w", err)
	}
	if cfg.MAC == "" {
		return nil, fmt.Errorf("iface config: mac: required (the port's MAC address)")
	}
	if link == nil {
		return nil, fmt.Errorf("iface: nil link")
	}
	cfg = cfg.WithDefaults()
	p, err4 := cfg.prefix()
	var ip4, mask [4]byte
	if err4 == nil {
		ip4, mask = p.Addr().As4(), ipv4.Mask(p.Bits())
	}
	mac, _ := ether.ParseAddr(cfg.MAC)
	i := &Interface{
		cfg:       cfg,
		link:      link,
		txOff:     link.TxOffloads(),
		has4:      err4 == nil,
		ip:        ip4,
		mask:      mask,
		mac:       mac,
		mtu:       cfg.MTU,
		udp:       make(map[uint16]*UDPSocket),
		ephemeral: cfg.EphemeralLow,
		scratch:   make([]byte, ipv4.MaxDatagramLen),
	}
	i.bcast = ipv4.SubnetBroadcast(i.ip, i.mask)
	if cfg.Gateway != "" {
		i.gw, _ = ipv4.ParseAddr(cfg.Gateway)
		i.hasGW = true
	}
	var err error
	if i.arp, err = arp.NewCache(cfg.ARP, i.ip, mac); err != nil {
		return nil, fmt.Errorf("iface config: %w", err)
	}
	if i.reasm, err = ipv4.NewReassembler(cfg.Reassembly, &i.stats.IP); err != nil {
		return nil, fmt.Errorf("iface config: %w", err)
	}
	if i.limiter, err = icmp.NewLimiter(cfg.ICMPRateLimit); err != nil {
		return nil, fmt.Errorf("iface config: %w", err)
	}
	if cfg.IPv6.Enabled() {
		if i.v6, err = newV6(cfg, mac, rnd); err != nil {
			return nil, fmt.Errorf("iface config: %w", err)
		}
	}
	return i, nil
}

// Config returns the effective configuration (defaults filled in).
func (i *Interface) Config() Config { return i.cfg }

// Addr returns our IPv4 address.
func (i *Interface) Addr() [4]byte { return i.ip }

// Netmask returns the netmask of our prefix.
func (i *Interface) Netmask() [4]byte { return i.mask }

// MAC returns our Ethernet address.
func (i *Interface) MAC() ether.Addr { return i.mac }

// MTU returns the link MTU (largest IP datagram).
func (i *Interface) MTU() int { return i.mtu }

// MSS returns the TCP maximum segment size the MTU allows without
// options: the MTU less the IPv4 header and a TCP header without
// options, 20 bytes each (RFC 9293 section 3.7.1).
func (i *Interface) MSS() int { return i.mtu - ipv4.MinHeaderLen - tcpHeaderLen }

// tcpHeaderLen is a TCP header without options (RFC 9293 section 3.1).
const tcpHeaderLen = 20

// ARP returns the neighbour cache (for inspection and static entries).
func (i *Interface) ARP() *arp.Cache { return i.arp }

// Stats returns a snapshot of every counter since the interface was
// made or since the last ResetStats.
func (i *Interface) Stats() Stats {
	s := i.stats
	s.ARP = countersSince(i.arp.Stats(), i.arpBase)
	return s
}

// SetMeter makes the interface charge its work (per frame, per datagram,
// per byte checksummed in software) to m; nil stops charging.
func (i *Interface) SetMeter(m hw.Meter) { i.meter = m }

func (i *Interface) charge(op hw.CostOp, n int64) {
	if i.meter != nil {
		i.meter.Charge(op, n)
	}
}

// SetEchoHandler sets the function that receives echo replies.
func (i *Interface) SetEchoHandler(h EchoHandler) { i.onEcho = h }

// RegisterTransport routes IP protocol proto to h (TCP registers for
// ipv4.ProtoTCP). ICMP and UDP are served by the interface itself. A nil
// h unregisters.
func (i *Interface) RegisterTransport(proto ipv4.Protocol, h TransportHandler) error {
	if proto == ipv4.ProtoICMP || proto == ipv4.ProtoUDP {
		return fmt.Errorf("register transport for protocol %d: %w", proto, ErrProtocolTaken)
	}
	if h != nil && i.handlers[proto] != nil {
		return fmt.Errorf("register transport for protocol %d: %w", proto, ErrProtocolTaken)
	}
	i.handlers[proto] = h
	return nil
}

// Start begins operation at now: the gratuitous ARP announcements of the
// configuration go out at the next Poll.
func (i *Interface) Start(now time.Duration) {
	if i.has4 {
		i.arp.Start(now)
	}
	if i.v6 != nil {
		i.start6(now)
	}
}

// Announce sends a gratuitous ARP announcement now (after an address or
// MAC change, or on request).
func (i *Interface) Announce(now time.Duration) { i.arp.Announce(now, i.arpSink()) }

// Poll runs the timers due at now (ARP retransmissions and expiry,
// reassembly timeouts with their ICMP errors) and returns the next
// deadline, or Never.
func (i *Interface) Poll(now time.Duration) time.Duration {
	a := i.arp.Poll(now, i.arpSink())
	r := i.reasm.Poll(now, (*reasmSink)(i))
	if i.v6 != nil {
		return min(a, r, i.poll6(now))
	}
	return min(a, r)
}

// Close drops every packet waiting for ARP and closes the UDP sockets.
func (i *Interface) Close() {
	i.arp.Flush(i.arpSink())
	if i.v6 != nil {
		i.v6.node.Flush(i.ndpSink())
	}
	ports := make([]int, 0, len(i.udp))
	for p := range i.udp {
		ports = append(ports, int(p))
	}
	sort.Ints(ports) // free in a fixed order: mempool state stays deterministic
	for _, p := range ports {
		i.udp[uint16(p)].Close()
	}
}

func (i *Interface) nextID() uint16 {
	i.ipID++
	return i.ipID
}

// isBroadcast reports whether a is a broadcast address on this link.
func (i *Interface) isBroadcast(a [4]byte) bool {
	return a == i.bcast || ipv4.IsLimitedBroadcast(a)
}

// AddNeighbor records ip's MAC in the ARP cache as if resolved now (for
// scenarios that pre-populate neighbours, and tests). Packets waiting for
// ip are sent.
func (i *Interface) AddNeighbor(now time.Duration, ip [4]byte, mac ether.Addr) {
	i.arp.Insert(now, ip, mac, i.arpSink())
}
