package iface

import (
	"fmt"
	"net/netip"

	"github.com/savanna-sim/savanna/stack/arp"
	"github.com/savanna-sim/savanna/stack/ether"
	"github.com/savanna-sim/savanna/stack/icmp"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// Config configures one interface. Zero fields take their defaults.
type Config struct {
	// Address is our IPv4 address with its prefix length, "10.0.0.1/24".
	Address string `yaml:"address"`
	// MAC is our Ethernet address; the runtime fills it from the port
	// (rte_eth_macaddr_get) when the scenario leaves it empty.
	MAC string `yaml:"mac"`
	// MTU is the largest IP datagram on the link (default 1500).
	MTU int `yaml:"mtu"`
	// Gateway is the default router, on-link; empty means none (only
	// on-link destinations are reachable).
	Gateway string `yaml:"gateway"`
	// TTL is the time-to-live of datagrams we send (default 64).
	TTL int `yaml:"ttl"`
	// ARP tunes the neighbour cache.
	ARP arp.Config `yaml:"arp"`
	// Reassembly bounds fragment reassembly.
	Reassembly ipv4.ReasmConfig `yaml:"reassembly"`
	// ICMPRateLimit limits ICMP errors sent.
	ICMPRateLimit icmp.LimiterConfig `yaml:"icmp_rate_limit"`
	// UDPRecvQueue bounds each UDP socket's receive queue in datagrams
	// (default 256).
	UDPRecvQueue int `yaml:"udp_recv_queue"`
	// EphemeralLow and EphemeralHigh bound the ports given to sockets
	// bound to port 0 (default 49152..65535, RFC 6335 section 6).
	EphemeralLow  int `yaml:"ephemeral_low"`
	EphemeralHigh int `yaml:"ephemeral_high"`
	// IPv6 turns on the IPv6 side (dual-stack with Address, IPv6 alone
	// without it).
	IPv6 IPv6Config `yaml:"ipv6"`
}

// Defaults.
const (
	DefaultMTU          = 1500
	DefaultUDPRecvQueue = 256
	// MinMTU is the smallest MTU accepted: RFC 791's 68.
	MinMTU = 68
	// MaxMTU is the largest MTU accepted (a 9000-byte jumbo frame and
	// more, up to what a 16-bit total length allows).
	MaxMTU = 65535
)

// WithDefaults returns c with zero fields set.
func (c Config) WithDefaults() Config {
	c = c.split()
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if c.TTL == 0 {
		c.TTL = ipv4.DefaultTTL
	}
	if c.UDPRecvQueue == 0 {
		c.UDPRecvQueue = DefaultUDPRecvQueue
	}
	if c.EphemeralLow == 0 {
		c.EphemeralLow = 49152
	}
	if c.EphemeralHigh == 0 {
		c.EphemeralHigh = 65535
	}
	c.ARP = c.ARP.WithDefaults()
	c.Reassembly = c.Reassembly.WithDefaults()
	c.ICMPRateLimit = c.ICMPRateLimit.WithDefaults()
	if c.IPv6.Enabled() {
		c.IPv6 = c.IPv6.withDefaults(c.MTU)
	}
	return c
}

// Validate reports the first invalid field, naming its key.
func (c Config) Validate() error {
	c = c.split()
	if c.Address != "" || !c.IPv6.Enabled() {
		if _, err := c.prefix(); err != nil {
			return err
		}
	}
	if c.IPv6.Enabled() {
		if err := c.IPv6.validate(c.MTU); err != nil {
			return err
		}
	}
	if c.MAC != "" {
		a, err := ether.ParseAddr(c.MAC)
		if err != nil {
			return fmt.Errorf("mac: %w", err)
		}
		if !a.IsUnicast() {
			return fmt.Errorf("mac: %s is not a unicast address", c.MAC)
		}
	}
	if c.MTU != 0 && (c.MTU < MinMTU || c.MTU > MaxMTU) {
		return fmt.Errorf("mtu: %d is outside %d..%d", c.MTU, MinMTU, MaxMTU)
	}
	if c.Gateway != "" && c.Address == "" {
		return fmt.Errorf("gateway: %s needs an IPv4 address (address)", c.Gateway)
	}
	if c.Gateway != "" {
		gw, err := ipv4.ParseAddr(c.Gateway)
		if err != nil {
			return fmt.Errorf("gateway: %w", err)
		}
		p, _ := c.prefix()
		if !p.Contains(netip.AddrFrom4(gw)) {
			return fmt.Errorf("gateway: %s is not on the link %s", c.Gateway, p.Masked())
		}
	}
	if c.TTL < 0 || c.TTL > 255 {
		return fmt.Errorf("ttl: %d is outside 1..255", c.TTL)
	}
	if err := c.ARP.Validate(); err != nil {
		return fmt.Errorf("arp.%w", err)
	}
	if err := c.Reassembly.Validate(); err != nil {
		return fmt.Errorf("reassembly.%w", err)
	}
	if err := c.ICMPRateLimit.Validate(); err != nil {
		return fmt.Errorf("icmp_rate_limit.%w", err)
	}
	if c.UDPRecvQueue < 0 || c.UDPRecvQueue > 1<<20 {
		return fmt.Errorf("udp_recv_queue: %d is outside 1..%d", c.UDPRecvQueue, 1<<20)
	}
	lo, hi := c.EphemeralLow, c.EphemeralHigh
	if lo < 0 || lo > 65535 {
		return fmt.Errorf("ephemeral_low: %d is outside 1..65535", lo)
	}
	if hi < 0 || hi > 65535 {
		return fmt.Errorf("ephemeral_high: %d is outside 1..65535", hi)
	}
	if lo != 0 && hi != 0 && lo > hi {
		return fmt.Errorf("ephemeral_low: %d is above ephemeral_high %d", lo, hi)
	}
	return nil
}

func (c Config) prefix() (netip.Prefix, error) {
	if c.Address == "" {
		return netip.Prefix{}, fmt.Errorf("address: required (an IPv4 address with prefix length, e.g. 10.0.0.1/24, or ipv6.address)")
	}
	p, err := netip.ParsePrefix(c.Address)
	if err != nil || !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("address: %q is not an IPv4 address with prefix length (e.g. 10.0.0.1/24)", c.Address)
	}
	if p.Bits() < 1 || p.Bits() > 31 {
		return netip.Prefix{}, fmt.Errorf("address: prefix length %d is outside 1..31", p.Bits())
	}
	a := p.Addr().As4()
	if ipv4.IsMulticast(a) || ipv4.IsLoopback(a) || ipv4.IsUnspecified(a) || ipv4.IsReserved(a) || ipv4.IsLimitedBroadcast(a) {
		return netip.Prefix{}, fmt.Errorf("address: %s is not a unicast host address", p.Addr())
	}
	mask := ipv4.Mask(p.Bits())
	if a == ipv4.SubnetBroadcast(a, mask) || p.Masked().Addr() == p.Addr() {
		return netip.Prefix{}, fmt.Errorf("address: %s is the network or broadcast address of %s", p.Addr(), p.Masked())
	}
	return p, nil
}
