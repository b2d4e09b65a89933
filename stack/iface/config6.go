package iface

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/savanna-sim/savanna/stack/icmpv6"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/ndp"
)

// IPv6Config turns on and configures the interface's IPv6 side. IPv6 is
// on when Address is set; the interface then forms its link-local
// address from the MAC (RFC 4862 section 5.3) and runs Neighbor
// Discovery. Zero fields take their defaults.
type IPv6Config struct {
	// Address is a static address with its prefix length,
	// "fd00::1/64"; its prefix is on-link (as Linux adds the prefix
	// route of an address configured by hand).
	Address string `yaml:"address"`
	// HopLimit is the hop limit of packets we send (default 64, Linux's
	// net.ipv6.conf.*.hop_limit); a Router Advertisement's Cur Hop Limit
	// overrides it (RFC 4861 section 6.3.4).
	HopLimit int `yaml:"hop_limit"`
	// ND is Neighbor Discovery's configuration; the zero value takes
	// ndp.DefaultConfig (the RFCs' values), with LinkMTU set to the MTU.
	ND ndp.Config `yaml:"nd"`
	// NDSet says ND was given explicitly: ndp's 0 values mean 0 (no
	// DAD, no Router Solicitation), so a zero ND is only the default
	// when this is false. Configuration code sets it; YAML leaves it.
	NDSet bool `yaml:"-"`
	// Reassembly bounds fragment reassembly (RFC 8200 section 4.5).
	Reassembly ipv6.ReasmConfig `yaml:"reassembly"`
	// MaxOptions bounds the options of one extension header (default 8).
	MaxOptions int `yaml:"max_options"`
	// PMTUExpires is how long a lowered path MTU holds (default 10 min,
	// RFC 8201 section 4).
	PMTUExpires time.Duration `yaml:"pmtu_expires"`
	// PMTUMaxEntries bounds the path MTU cache (default 1024).
	PMTUMaxEntries int `yaml:"pmtu_max_entries"`
	// Echo says which echo requests are answered (RFC 4443 section 4.2).
	Echo icmpv6.EchoConfig `yaml:"echo"`
}

// split moves an IPv6 Address ("fd00::1/64") to IPv6.Address, so that
// the one address key a runtime passes may name either family: an
// interface given only an IPv6 address is IPv6-only.
func (c Config) split() Config {
	if c.IPv6.Address == "" {
		if p, err := netip.ParsePrefix(c.Address); err == nil && p.Addr().Is6() && !p.Addr().Is4In6() {
			c.IPv6.Address, c.Address = c.Address, ""
		}
	}
	return c
}

// Enabled reports whether the interface speaks IPv6.
func (c IPv6Config) Enabled() bool { return c.Address != "" }

// withDefaults fills zero fields; mtu is the link MTU.
func (c IPv6Config) withDefaults(mtu int) IPv6Config {
	if c.HopLimit == 0 {
		c.HopLimit = ipv6.DefaultHopLimit
	}
	if !c.NDSet && c.ND == (ndp.Config{}) {
		c.ND = ndp.DefaultConfig()
	}
	if c.ND.LinkMTU == 0 {
		c.ND.LinkMTU = mtu
	}
	c.Reassembly = c.Reassembly.WithDefaults()
	if c.MaxOptions == 0 {
		c.MaxOptions = 8
	}
	return c
}

// validate reports the first invalid field by key (under "ipv6.").
func (c IPv6Config) validate(mtu int) error {
	if _, err := c.prefix(); err != nil {
		return err
	}
	if mtu != 0 && mtu < ipv6.MinMTU {
		return fmt.Errorf("mtu: %d is below the %d bytes IPv6 needs (RFC 8200 section 5)", mtu, ipv6.MinMTU)
	}
	if c.HopLimit < 0 || c.HopLimit > 255 {
		return fmt.Errorf("ipv6.hop_limit: %d is outside 1..255", c.HopLimit)
	}
	d := c.withDefaults(max(mtu, DefaultMTU))
	if err := d.ND.Validate(); err != nil {
		return fmt.Errorf("ipv6.nd.%w", err)
	}
	if err := c.Reassembly.Validate(); err != nil {
		return fmt.Errorf("ipv6.reassembly.%w", err)
	}
	if c.MaxOptions < 0 || c.MaxOptions > 255 {
		return fmt.Errorf("ipv6.max_options: %d is outside 1..255", c.MaxOptions)
	}
	if c.PMTUExpires < 0 {
		return fmt.Errorf("ipv6.pmtu_expires: %v is negative", c.PMTUExpires)
	}
	if c.PMTUMaxEntries < 0 {
		return fmt.Errorf("ipv6.pmtu_max_entries: %d is negative", c.PMTUMaxEntries)
	}
	return nil
}

// prefix parses Address.
func (c IPv6Config) prefix() (netip.Prefix, error) {
	p, err := netip.ParsePrefix(c.Address)
	if err != nil || !p.Addr().Is6() || p.Addr().Is4In6() || p.Addr().Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("ipv6.address: %q is not an IPv6 address with prefix length (e.g. fd00::1/64)", c.Address)
	}
	a := p.Addr()
	if a.IsMulticast() || a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() {
		return netip.Prefix{}, fmt.Errorf("ipv6.address: %s is not a global or unique local unicast address (the link-local one is formed from the MAC)", a)
	}
	if p.Bits() < 1 || p.Bits() > 128 {
		return netip.Prefix{}, fmt.Errorf("ipv6.address: prefix length %d is outside 1..128", p.Bits())
	}
	return p, nil
}

// HasIPv6 reports whether the configuration turns IPv6 on (an IPv6
// Address, or IPv6.Address).
func (c Config) HasIPv6() bool { return c.split().IPv6.Enabled() }
