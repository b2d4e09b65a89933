package arp

import (
	"fmt"
	"time"
)

// Config holds the cache's tunables. A zero field takes its default (see
// DefaultConfig), so a scenario file only names what it changes.
type Config struct {
	// ReachableTime is how long a resolved entry is trusted (default
	// 60 s; Linux's base_reachable_time is 30 s, lwIP's ARP_MAXAGE 5 min).
	ReachableTime time.Duration `yaml:"reachable_time"`
	// RefreshBefore: an entry used within this time of its expiry is
	// re-validated with a unicast request (default 5 s).
	RefreshBefore time.Duration `yaml:"refresh_before"`
	// RetransmitInterval is the time between requests for one
	// destination (default 1 s, RFC 1122 section 2.3.2.1).
	RetransmitInterval time.Duration `yaml:"retransmit_interval"`
	// MaxRequests is how many requests are sent before resolution fails
	// (default 3, Linux's mcast_solicit).
	MaxRequests int `yaml:"max_requests"`
	// MaxEntries bounds the table (default 256).
	MaxEntries int `yaml:"max_entries"`
	// PendingPerDest bounds packets queued for one destination while it
	// resolves (default 1024). Linux bounds the queue by bytes instead
	// (PendingBytesPerDest); this is a backstop.
	PendingPerDest int `yaml:"pending_per_dest"`
	// PendingBytesPerDest bounds the bytes queued for one destination
	// while it resolves, each packet counted at its length plus the
	// kernel's per-buffer overhead (PendingOverhead), as Linux's
	// unres_qlen_bytes does (default 212992, Linux's default since 3.3,
	// ip-sysctl.rst). That is 101 full-size frames (Linux's derived
	// unres_qlen), or about 325 SYNs: a load generator opening a few
	// hundred connections at once loses none.
	PendingBytesPerDest int `yaml:"pending_bytes_per_dest"`
	// PendingTotal bounds packets queued over all destinations (default
	// 1024).
	PendingTotal int `yaml:"pending_total"`
	// GratuitousCount is how many announcements Start sends (default 1).
	GratuitousCount int `yaml:"gratuitous_count"`
	// GratuitousInterval separates announcements (default 1 s).
	GratuitousInterval time.Duration `yaml:"gratuitous_interval"`
	// NoGratuitous disables the announcements on Start.
	NoGratuitous bool `yaml:"no_gratuitous"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		ReachableTime:       60 * time.Second,
		RefreshBefore:       5 * time.Second,
		RetransmitInterval:  time.Second,
		MaxRequests:         3,
		MaxEntries:          256,
		PendingPerDest:      1024,
		PendingBytesPerDest: 212992,
		PendingTotal:        1024,
		GratuitousCount:     1,
		GratuitousInterval:  time.Second,
	}
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.ReachableTime == 0 {
		c.ReachableTime = d.ReachableTime
	}
	if c.RefreshBefore == 0 {
		c.RefreshBefore = d.RefreshBefore
	}
	if c.RetransmitInterval == 0 {
		c.RetransmitInterval = d.RetransmitInterval
	}
	if c.MaxRequests == 0 {
		c.MaxRequests = d.MaxRequests
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = d.MaxEntries
	}
	if c.PendingPerDest == 0 {
		c.PendingPerDest = d.PendingPerDest
	}
	if c.PendingBytesPerDest == 0 {
		c.PendingBytesPerDest = d.PendingBytesPerDest
	}
	if c.PendingTotal == 0 {
		c.PendingTotal = d.PendingTotal
	}
	if c.GratuitousCount == 0 {
		c.GratuitousCount = d.GratuitousCount
	}
	if c.GratuitousInterval == 0 {
		c.GratuitousInterval = d.GratuitousInterval
	}
	return c
}

// Validate reports the first invalid field, naming its key. Zero fields
// are valid (they take defaults).
func (c Config) Validate() error {
	switch {
	case c.ReachableTime < 0:
		return fmt.Errorf("reachable_time: %v is negative", c.ReachableTime)
	case c.RefreshBefore < 0:
		return fmt.Errorf("refresh_before: %v is negative", c.RefreshBefore)
	case c.ReachableTime > 0 && c.RefreshBefore >= c.ReachableTime:
		return fmt.Errorf("refresh_before: %v is not below reachable_time %v", c.RefreshBefore, c.ReachableTime)
	case c.RetransmitInterval < 0:
		return fmt.Errorf("retransmit_interval: %v is negative", c.RetransmitInterval)
	case c.MaxRequests < 0 || c.MaxRequests > 100:
		return fmt.Errorf("max_requests: %d is outside 1..100", c.MaxRequests)
	case c.MaxEntries < 0 || c.MaxEntries > 1<<20:
		return fmt.Errorf("max_entries: %d is outside 1..%d", c.MaxEntries, 1<<20)
	case c.PendingPerDest < 0 || c.PendingPerDest > 1024:
		return fmt.Errorf("pending_per_dest: %d is outside 1..1024", c.PendingPerDest)
	case c.PendingBytesPerDest < 0 || c.PendingBytesPerDest > 64<<20:
		return fmt.Errorf("pending_bytes_per_dest: %d is outside 1..%d", c.PendingBytesPerDest, 64<<20)
	case c.PendingTotal < 0 || c.PendingTotal > 1<<20:
		return fmt.Errorf("pending_total: %d is outside 1..%d", c.PendingTotal, 1<<20)
	case c.GratuitousCount < 0 || c.GratuitousCount > 100:
		return fmt.Errorf("gratuitous_count: %d is outside 1..100", c.GratuitousCount)
	case c.GratuitousInterval < 0:
		return fmt.Errorf("gratuitous_interval: %v is negative", c.GratuitousInterval)
	}
	return nil
}
