package ndp

import (
	"fmt"
	"net/netip"
	"time"
)

// Config holds the node's protocol constants and limits. Unlike
// stack/arp's, every field is explicit: DefaultConfig fills them with the
// RFCs' values, and 0 means 0 where the RFC gives 0 a meaning (no
// Duplicate Address Detection, no Router Solicitation, no start delay);
// Validate refuses it, by key, where it has none.
type Config struct {
	// MaxMulticastSolicit is how many multicast solicitations address
	// resolution sends before it fails (RFC 4861 section 10,
	// MAX_MULTICAST_SOLICIT 3; Linux mcast_solicit).
	MaxMulticastSolicit int `yaml:"max_multicast_solicit"`
	// MaxUnicastSolicit is how many unicast probes PROBE sends before
	// the entry is discarded (section 10, MAX_UNICAST_SOLICIT 3; Linux
	// ucast_solicit).
	MaxUnicastSolicit int `yaml:"max_unicast_solicit"`
	// RetransTimer separates solicitations (section 10, RETRANS_TIMER
	// 1 s; section 6.3.2 RetransTimer, which Router Advertisements may
	// change; Linux retrans_time_ms).
	RetransTimer time.Duration `yaml:"retrans_timer"`
	// DelayFirstProbeTime is how long DELAY waits for an upper-layer
	// confirmation before probing (section 10, DELAY_FIRST_PROBE_TIME
	// 5 s; Linux delay_first_probe_time).
	DelayFirstProbeTime time.Duration `yaml:"delay_first_probe_time"`
	// BaseReachableTime is the mean time a confirmation is trusted
	// (section 10, REACHABLE_TIME 30 s; Linux base_reachable_time_ms);
	// the ReachableTime in use is drawn from 0.5 to 1.5 times it
	// (section 6.3.2). Router Advertisements may change it.
	BaseReachableTime time.Duration `yaml:"base_reachable_time"`
	// ReachableRecompute is how often ReachableTime is drawn anew when
	// no Router Advertisement changes it (section 6.3.2: "at least once
	// every few hours").
	ReachableRecompute time.Duration `yaml:"reachable_recompute"`

	// MaxRtrSolicitations is how many Router Solicitations are sent at
	// start (section 10, MAX_RTR_SOLICITATIONS 3; Linux
	// router_solicitations); 0 sends none.
	MaxRtrSolicitations int `yaml:"max_rtr_solicitations"`
	// RtrSolicitationInterval separates them (section 10,
	// RTR_SOLICITATION_INTERVAL 4 s).
	RtrSolicitationInterval time.Duration `yaml:"rtr_solicitation_interval"`
	// MaxRtrSolicitationDelay bounds the random delay before the first
	// solicitation and the first Duplicate Address Detection message
	// (section 10, MAX_RTR_SOLICITATION_DELAY 1 s; RFC 4862 section
	// 5.4.2); 0: no delay.
	MaxRtrSolicitationDelay time.Duration `yaml:"max_rtr_solicitation_delay"`

	// DupAddrDetectTransmits is how many solicitations Duplicate Address
	// Detection sends for each new address (RFC 4862 section 5.1,
	// default 1; Linux dad_transmits); 0 disables it.
	DupAddrDetectTransmits int `yaml:"dup_addr_detect_transmits"`

	// LinkMTU is the link's own MTU, the largest an MTU option may set
	// (RFC 4861 section 6.3.4); 1500 for Ethernet (RFC 2464 section 2).
	LinkMTU int `yaml:"link_mtu"`

	// MaxNeighbors bounds the neighbour cache (Linux gc_thresh3 is 1024).
	MaxNeighbors int `yaml:"max_neighbors"`
	// PendingPerDest bounds the packets queued for one neighbour while
	// it is INCOMPLETE (RFC 4861 section 7.2.2: "at least one ... SHOULD
	// be queued"); a backstop to PendingBytesPerDest.
	PendingPerDest int `yaml:"pending_per_dest"`
	// PendingBytesPerDest bounds the bytes queued for one neighbour,
	// each packet counted at its length plus PendingOverhead, as Linux's
	// unres_qlen_bytes does (default 212992, ip-sysctl.rst).
	PendingBytesPerDest int `yaml:"pending_bytes_per_dest"`
	// PendingTotal bounds the packets queued over all neighbours.
	PendingTotal int `yaml:"pending_total"`
	// DefaultRouter, when set, is a default router configured by hand:
	// Start puts it on the default router list (RFC 4861 section 6.3.4's
	// list, the one Router Advertisements fill) with an infinite
	// lifetime, so that packets to off-link destinations go to it,
	// resolved by Neighbor Discovery like any router (section 7.2),
	// also on a link without advertisements. Advertisements neither
	// expire nor remove it (Linux's "ip -6 route add default via ADDR"
	// likewise stays). It must be a unicast address on the link: its
	// link-local address (RFC 4861 section 8: routers are known by
	// their link-local addresses) or one of an on-link prefix.
	DefaultRouter netip.Addr `yaml:"default_router"`
	// MaxRouters bounds the default router list (Linux has no limit;
	// RFC 4861 section 6.3.4 lets a host ignore routers beyond its
	// storage).
	MaxRouters int `yaml:"max_routers"`
	// MaxPrefixes bounds the prefix list.
	MaxPrefixes int `yaml:"max_prefixes"`
	// MaxAddresses bounds the addresses of the interface (Linux
	// max_addresses is 16).
	MaxAddresses int `yaml:"max_addresses"`
	// MaxDestinations bounds the destination cache (RFC 4861 section
	// 5.1); when it is full it is flushed, since every entry can be
	// recomputed by next-hop determination.
	MaxDestinations int `yaml:"max_destinations"`

	// MaxGroups bounds the multicast groups joined.
	MaxGroups int `yaml:"max_groups"`
	// Robustness is MLD's Robustness Variable: how many times a state
	// change report is sent (RFC 3810 section 9.1, default 2).
	Robustness int `yaml:"robustness"`
	// UnsolicitedReportInterval bounds the random time between the
	// repetitions of a state change report (RFC 3810 section 9.11,
	// default 1 s).
	UnsolicitedReportInterval time.Duration `yaml:"unsolicited_report_interval"`
	// OlderVersionQuerierTimeout is how long MLDv1 compatibility mode
	// lasts after an MLDv1 query (RFC 3810 section 9.12: Robustness
	// times the Query Interval, 125 s, plus the Query Response
	// Interval, 10 s).
	OlderVersionQuerierTimeout time.Duration `yaml:"older_version_querier_timeout"`
}

// DefaultConfig returns the RFCs' values.
func DefaultConfig() Config {
	return Config{
		MaxMulticastSolicit:        3,
		MaxUnicastSolicit:          3,
		RetransTimer:               time.Second,
		DelayFirstProbeTime:        5 * time.Second,
		BaseReachableTime:          30 * time.Second,
		ReachableRecompute:         2 * time.Hour,
		MaxRtrSolicitations:        3,
		RtrSolicitationInterval:    4 * time.Second,
		MaxRtrSolicitationDelay:    time.Second,
		DupAddrDetectTransmits:     1,
		LinkMTU:                    1500,
		MaxNeighbors:               256,
		PendingPerDest:             1024,
		PendingBytesPerDest:        212992,
		PendingTotal:               1024,
		MaxRouters:                 16,
		MaxPrefixes:                16,
		MaxAddresses:               16,
		MaxDestinations:            1024,
		MaxGroups:                  64,
		Robustness:                 2,
		UnsolicitedReportInterval:  time.Second,
		OlderVersionQuerierTimeout: 2*125*time.Second + 10*time.Second,
	}
}

// Validate returns an error naming the first invalid field by key.
func (c Config) Validate() error {
	positive := []struct {
		key string
		v   time.Duration
	}{
		{"retrans_timer", c.RetransTimer},
		{"delay_first_probe_time", c.DelayFirstProbeTime},
		{"base_reachable_time", c.BaseReachableTime},
		{"reachable_recompute", c.ReachableRecompute},
		{"rtr_solicitation_interval", c.RtrSolicitationInterval},
		{"older_version_querier_timeout", c.OlderVersionQuerierTimeout},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("%s: %v is not positive", p.key, p.v)
		}
	}
	ranges := []struct {
		key    string
		v      int
		lo, hi int
	}{
		{"max_multicast_solicit", c.MaxMulticastSolicit, 1, 100},
		{"max_unicast_solicit", c.MaxUnicastSolicit, 1, 100},
		{"max_rtr_solicitations", c.MaxRtrSolicitations, 0, 100},
		{"dup_addr_detect_transmits", c.DupAddrDetectTransmits, 0, 100},
		{"link_mtu", c.LinkMTU, 1280, 65535},
		{"max_neighbors", c.MaxNeighbors, 1, 1 << 20},
		{"pending_per_dest", c.PendingPerDest, 1, 1024},
		{"pending_bytes_per_dest", c.PendingBytesPerDest, 1, 64 << 20},
		{"pending_total", c.PendingTotal, 1, 1 << 20},
		{"max_routers", c.MaxRouters, 1, 1024},
		{"max_prefixes", c.MaxPrefixes, 1, 1024},
		{"max_addresses", c.MaxAddresses, 1, 1024},
		{"max_destinations", c.MaxDestinations, 1, 1 << 20},
		{"max_groups", c.MaxGroups, 1, 4096},
		// RFC 3810 section 9.1: "MUST NOT be zero".
		{"robustness", c.Robustness, 1, 7},
	}
	for _, r := range ranges {
		if r.v < r.lo || r.v > r.hi {
			return fmt.Errorf("%s: %d is outside %d..%d", r.key, r.v, r.lo, r.hi)
		}
	}
	if r := c.DefaultRouter; r.IsValid() && (!r.Is6() || r.Is4In6() || r.Zone() != "" || !r.IsGlobalUnicast() && !r.IsLinkLocalUnicast()) {
		return fmt.Errorf("default_router: %v is not an IPv6 unicast address (want a router's link-local address, e.g. fe80::1, or a global one on the link)", r)
	}
	switch {
	case c.MaxRtrSolicitationDelay < 0:
		return fmt.Errorf("max_rtr_solicitation_delay: %v is negative", c.MaxRtrSolicitationDelay)
	case c.UnsolicitedReportInterval < 0:
		return fmt.Errorf("unsolicited_report_interval: %v is negative", c.UnsolicitedReportInterval)
	}
	return nil
}
