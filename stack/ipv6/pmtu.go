package ipv6

import (
	"fmt"
	"time"
)

// TCPHeaderLen is the TCP header without options, for MSSForMTU.
const TCPHeaderLen = 20

// MSSForMTU returns the TCP maximum segment size that fits a path MTU
// over IPv6: the MTU less the fixed IPv6 and TCP headers (RFC 9293
// section 3.7.1, RFC 6691 section 2; 1220 at the minimum MTU).
func MSSForMTU(mtu int) int { return mtu - HeaderLen - TCPHeaderLen }

// PMTUConfig configures a path MTU cache.
type PMTUConfig struct {
	// LinkMTU is the MTU of the link the cache is for: every path starts
	// there (RFC 8201 section 4). Required, at least MinMTU.
	LinkMTU int `yaml:"link_mtu"`
	// Expires is how long a lowered estimate holds before the path is
	// tried at LinkMTU again (default 10 minutes: RFC 8201 section 4 asks
	// for at least 5 and recommends 10; Linux's
	// net.ipv6.route.mtu_expires is 600 s).
	Expires time.Duration `yaml:"expires"`
	// MaxEntries bounds the destinations with a lowered estimate (default
	// 1024). When full, the entry that expires first is evicted: its
	// destination falls back to LinkMTU and will get a Packet Too Big
	// again if the path still needs it.
	MaxEntries int `yaml:"max_entries"`
}

// PMTUStats count what the cache did with Packet Too Big messages.
type PMTUStats struct {
	// PacketTooBig: Packet Too Big messages applied to the cache.
	PacketTooBig uint64 `json:"packet_too_big"`
	// Lowered: estimates lowered by one of them.
	Lowered uint64 `json:"lowered"`
	// NotLower: messages ignored because they reported an MTU not below
	// the current estimate (RFC 8201 section 4: never increase on a
	// Packet Too Big).
	NotLower uint64 `json:"not_lower"`
	// BelowMinimum: messages discarded because they reported an MTU below
	// 1280 (RFC 8201 section 4).
	BelowMinimum uint64 `json:"below_minimum"`
	// Expired: estimates raised back to LinkMTU after Expires.
	Expired uint64 `json:"expired"`
	// Evicted: estimates dropped because the cache was full.
	Evicted uint64 `json:"evicted"`
}

// PMTUOutcome is what a Packet Too Big did to the cache.
type PMTUOutcome uint8

// Outcomes of PacketTooBig.
const (
	// PMTULowered: the estimate went down; TCP should lower its MSS.
	PMTULowered PMTUOutcome = iota + 1
	// PMTUNotLower: the reported MTU was not below the estimate.
	PMTUNotLower
	// PMTUBelowMinimum: the reported MTU was below 1280; discarded.
	PMTUBelowMinimum
)

type pmtuEntry struct {
	dst     Addr
	mtu     int
	expires time.Duration
}

// PMTUCache holds the path MTU estimate of each destination of one link
// (RFC 8201), sans-I/O: Packet Too Big messages lower an estimate, time
// (given by the caller) raises it back. Destinations without an entry
// are at the link MTU.
type PMTUCache struct {
	cfg     PMTUConfig
	entries []pmtuEntry // insertion order, so that eviction is deterministic
	index   map[Addr]int
	stats   PMTUStats
}

// NewPMTUCache returns an empty cache.
func NewPMTUCache(cfg PMTUConfig) (*PMTUCache, error) {
	switch {
	case cfg.LinkMTU < MinMTU || cfg.LinkMTU > HeaderLen+MaxPayloadLen:
		return nil, fmt.Errorf("pmtu: link_mtu: %d is outside %d..%d", cfg.LinkMTU, MinMTU, HeaderLen+MaxPayloadLen)
	case cfg.Expires < 0:
		return nil, fmt.Errorf("pmtu: expires: %v is negative", cfg.Expires)
	case cfg.MaxEntries < 0 || cfg.MaxEntries > 1<<20:
		return nil, fmt.Errorf("pmtu: max_entries: %d is outside 1..%d", cfg.MaxEntries, 1<<20)
	}
	if cfg.Expires == 0 {
		cfg.Expires = 10 * time.Minute
	}
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = 1024
	}
	return &PMTUCache{cfg: cfg, index: make(map[Addr]int)}, nil
}

// Config returns the effective configuration.
func (c *PMTUCache) Config() PMTUConfig { return c.cfg }

// Stats returns the counters.
func (c *PMTUCache) Stats() PMTUStats { return c.stats }

// Len returns the destinations with a lowered estimate.
func (c *PMTUCache) Len() int { return len(c.entries) }

// PacketTooBig applies a Packet Too Big about a packet sent to dst
// reporting mtu (RFC 8201 section 4): below 1280 it is discarded; not
// below the current estimate it changes nothing; otherwise the estimate
// drops to mtu for Expires. The caller has matched the quoted packet to
// one it sent.
func (c *PMTUCache) PacketTooBig(now time.Duration, dst Addr, mtu uint32) PMTUOutcome {
	c.stats.PacketTooBig++
	if mtu < MinMTU {
		c.stats.BelowMinimum++
		return PMTUBelowMinimum
	}
	if int64(mtu) >= int64(c.MTU(now, dst)) {
		c.stats.NotLower++
		return PMTUNotLower
	}
	c.stats.Lowered++
	exp := now + c.cfg.Expires
	if i, ok := c.index[dst]; ok {
		c.entries[i].mtu, c.entries[i].expires = int(mtu), exp
		return PMTULowered
	}
	if len(c.entries) >= c.cfg.MaxEntries {
		c.evict()
	}
	c.index[dst] = len(c.entries)
	c.entries = append(c.entries, pmtuEntry{dst: dst, mtu: int(mtu), expires: exp})
	return PMTULowered
}

// MTU returns the path MTU estimate for dst at now.
func (c *PMTUCache) MTU(now time.Duration, dst Addr) int {
	if len(c.index) == 0 {
		// No Packet Too Big lowered any path (the usual case): every
		// packet would otherwise hash its 16-byte destination into an
		// empty map. Small enough to be inlined into the output path.
		return c.cfg.LinkMTU
	}
	return c.lookup(now, dst)
}

// lookup is MTU when some estimate is cached.
func (c *PMTUCache) lookup(now time.Duration, dst Addr) int {
	i, ok := c.index[dst]
	if !ok {
		return c.cfg.LinkMTU
	}
	if now >= c.entries[i].expires {
		c.stats.Expired++
		c.remove(i)
		return c.cfg.LinkMTU
	}
	return c.entries[i].mtu
}

// MSS returns the TCP maximum segment size for dst at now (MSSForMTU of
// the estimate), for TCP to clamp its segments to.
func (c *PMTUCache) MSS(now time.Duration, dst Addr) int { return MSSForMTU(c.MTU(now, dst)) }

// Poll raises expired estimates back to the link MTU and returns the next
// expiry, or Never.
func (c *PMTUCache) Poll(now time.Duration) time.Duration {
	next := Never
	for i := 0; i < len(c.entries); {
		if now >= c.entries[i].expires {
			c.stats.Expired++
			c.remove(i)
			continue
		}
		next = min(next, c.entries[i].expires)
		i++
	}
	return next
}

// evict removes the entry that expires first (the oldest lowering).
func (c *PMTUCache) evict() {
	j := 0
	for i := range c.entries {
		if c.entries[i].expires < c.entries[j].expires {
			j = i
		}
	}
	c.stats.Evicted++
	c.remove(j)
}

// remove deletes entry i, keeping the others in order.
func (c *PMTUCache) remove(i int) {
	delete(c.index, c.entries[i].dst)
	copy(c.entries[i:], c.entries[i+1:])
	c.entries = c.entries[:len(c.entries)-1]
	for k := i; k < len(c.entries); k++ {
		c.index[c.entries[k].dst] = k
	}
}
