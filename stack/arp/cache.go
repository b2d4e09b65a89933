package arp

import (
	"fmt"
	"math"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ether"
)

// Never is the deadline Poll returns when no timer is armed.
const Never = time.Duration(math.MaxInt64)

// Sink takes the cache's output. stack/iface implements it; tests
// implement it to record what would be sent.
type Sink interface {
	// SendARP transmits the ARP packet r in a frame to the Ethernet
	// address dst.
	SendARP(now time.Duration, r Repr, dst ether.Addr)
	// SendPending transmits a packet that waited for resolution, now
	// that its next hop's address mac is known. The sink owns m.
	SendPending(now time.Duration, m *hw.Mbuf, mac ether.Addr)
	// DropPending releases (frees) a waiting packet the cache gave up
	// on; the cache has counted why.
	DropPending(m *hw.Mbuf)
}

type entryState uint8

const (
	stateFree entryState = iota
	stateIncomplete
	stateReachable
)

// PendingOverhead is what Linux counts for a queued packet beyond its
// bytes: SKB_TRUESIZE adds the aligned sizes of struct sk_buff (256) and
// struct skb_shared_info (320) on x86-64.
const PendingOverhead = 576

// pendingPrealloc is the room each entry's queue starts with, so that
// the common case (a few packets while one request is answered) does not
// allocate, and a table of many entries stays small.
const pendingPrealloc = 16

// entry is one row of the table.
type entry struct {
	ip         [4]byte
	mac        ether.Addr
	state      entryState
	refreshing bool
	requests   int           // requests sent for this resolution
	deadline   time.Duration // next retransmission (incomplete) or expiry (reachable)
	pending    []*hw.Mbuf
	// pendingBytes is pending's size as PendingBytesPerDest counts it.
	pendingBytes int
}

// Cache is a sans-I/O ARP neighbour cache for one interface.
type Cache struct {
	cfg     Config
	ip      [4]byte
	mac     ether.Addr
	entries []entry
	index   map[[4]byte]int32
	free    []int32
	pending int // queued packets over all entries

	gratuitousLeft int
	gratuitousAt   time.Duration

	next  time.Duration // lower bound of the earliest deadline
	stats Stats
}

// NewCache returns a cache for the interface with address ip and MAC
// mac. Zero fields of cfg take their defaults.
func NewCache(cfg Config, ip [4]byte, mac ether.Addr) (*Cache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("arp config: %w", err)
	}
	cfg = cfg.WithDefaults()
	c := &Cache{
		cfg:     cfg,
		ip:      ip,
		mac:     mac,
		entries: make([]entry, cfg.MaxEntries),
		index:   make(map[[4]byte]int32, cfg.MaxEntries),
		free:    make([]int32, 0, cfg.MaxEntries),
		next:    Never,
	}
	for i := cfg.MaxEntries - 1; i >= 0; i-- {
		c.entries[i].pending = make([]*hw.Mbuf, 0, min(cfg.PendingPerDest, pendingPrealloc))
		c.free = append(c.free, int32(i))
	}
	return c, nil
}

// Config returns the effective configuration (defaults filled in).
func (c *Cache) Config() Config { return c.cfg }

// Stats returns the counters.
func (c *Cache) Stats() Stats { return c.stats }

// CountError counts a packet that failed Parse.
func (c *Cache) CountError(err error) { c.stats.CountError(err) }

// Len returns the number of entries in use (resolving or resolved).
func (c *Cache) Len() int { return len(c.entries) - len(c.free) }

// Pending returns the number of packets waiting for resolution.
func (c *Cache) Pending() int { return c.pending }

// Lookup returns the MAC of a resolved entry without side effects.
func (c *Cache) Lookup(ip [4]byte) (ether.Addr, bool) {
	if i, ok := c.index[ip]; ok && c.entries[i].state == stateReachable {
		return c.entries[i].mac, true
	}
	return ether.Addr{}, false
}

func (c *Cache) arm(t time.Duration) {
	if t < c.next {
		c.next = t
	}
}

// Start schedules the gratuitous announcements of the configuration,
// the first at now.
func (c *Cache) Start(now time.Duration) {
	if c.cfg.NoGratuitous {
		return
	}
	c.gratuitousLeft = c.cfg.GratuitousCount
	c.gratuitousAt = now
	c.arm(now)
}

// Announce sends one gratuitous ARP request for our address now: an
// ARP Announcement of RFC 5227 section 3 (sender and target protocol
// address both ours, target hardware address zero, broadcast).
func (c *Cache) Announce(now time.Duration, sink Sink) {
	c.stats.TxGratuitous++
	sink.SendARP(now, Repr{Op: OpRequest, SenderHW: c.mac, SenderIP: c.ip, TargetIP: c.ip}, ether.BroadcastAddr())
}

// Resolve finds the MAC of next hop ip for packet m. When the entry is
// resolved it returns the MAC and true, and the caller sends m. Otherwise
// the cache has taken m: it is queued until the reply comes (a request
// has been sent if this is a new resolution), or dropped through
// sink.DropPending when the queues are full (counted).
func (c *Cache) Resolve(now time.Duration, ip [4]byte, m *hw.Mbuf, sink Sink) (ether.Addr, bool) {
	if i, ok := c.index[ip]; ok {
		e := &c.entries[i]
		if e.state == stateReachable && now < e.deadline {
			if !e.refreshing && e.deadline-now <= c.cfg.RefreshBefore {
				e.refreshing = true
				c.stats.TxRefreshes++
				sink.SendARP(now, Repr{Op: OpRequest, SenderHW: c.mac, SenderIP: c.ip, TargetIP: ip}, e.mac)
			}
			return e.mac, true
		}
		if e.state == stateReachable {
			// Expired but not yet swept by Poll: resolve afresh.
			c.stats.Expired++
			c.restart(now, e, sink)
		}
		c.enqueue(e, m, sink)
		return ether.Addr{}, false
	}
	e := c.alloc(ip, sink)
	c.restart(now, e, sink)
	c.enqueue(e, m, sink)
	return ether.Addr{}, false
}

// restart turns e into a new resolution and sends its first request.
func (c *Cache) restart(now time.Duration, e *entry, sink Sink) {
	e.state = stateIncomplete
	e.refreshing = false
	e.mac = ether.Addr{}
	e.requests = 1
	e.deadline = now + c.cfg.RetransmitInterval
	c.arm(e.deadline)
	c.stats.TxRequests++
	sink.SendARP(now, Repr{Op: OpRequest, SenderHW: c.mac, SenderIP: c.ip, TargetIP: e.ip}, ether.BroadcastAddr())
}

func (c *Cache) enqueue(e *entry, m *hw.Mbuf, sink Sink) {
	size := m.PktLen + PendingOverhead
	switch {
	case len(e.pending) >= c.cfg.PendingPerDest || e.pendingBytes+size > c.cfg.PendingBytesPerDest:
		c.stats.PendingDropDestFull++
		sink.DropPending(m)
	case c.pending >= c.cfg.PendingTotal:
		c.stats.PendingDropTotalFull++
		sink.DropPending(m)
	default:
		e.pending = append(e.pending, m)
		e.pendingBytes += size
		c.pending++
		c.stats.PendingQueued++
	}
}

// alloc takes a free entry for ip, evicting one if the table is full:
// the resolved entry closest to expiry, else the oldest resolution.
func (c *Cache) alloc(ip [4]byte, sink Sink) *entry {
	if len(c.free) == 0 {
		victim := -1
		for i := range c.entries {
			e := &c.entries[i]
			if victim < 0 {
				victim = i
				continue
			}
			v := &c.entries[victim]
			// Prefer resolved entries (nothing is lost), then the earliest deadline.
			if (e.state == stateReachable) != (v.state == stateReachable) {
				if e.state == stateReachable {
					victim = i
				}
				continue
			}
			if e.deadline < v.deadline {
				victim = i
			}
		}
		c.stats.Evicted++
		c.release(int32(victim), sink, &c.stats.PendingDropEvicted)
	}
	i := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	e := &c.entries[i]
	e.ip = ip
	c.index[ip] = i
	return e
}

// release frees entry i, dropping its pending packets into counter.
func (c *Cache) release(i int32, sink Sink, counter *uint64) {
	e := &c.entries[i]
	for j, m := range e.pending {
		*counter++
		sink.DropPending(m)
		e.pending[j] = nil
	}
	c.pending -= len(e.pending)
	e.pending = e.pending[:0]
	e.pendingBytes = 0
	delete(c.index, e.ip)
	pend := e.pending
	*e = entry{pending: pend}
	c.free = append(c.free, i)
}

// Input processes a received, parsed ARP packet by RFC 826's reception
// algorithm: update the sender's entry if there is one (the merge rule),
// create it if the packet is aimed at our address, and answer a request
// for our address.
func (c *Cache) Input(now time.Duration, r Repr, sink Sink) {
	if r.Op == OpRequest {
		c.stats.RxRequests++
	} else {
		c.stats.RxReplies++
	}
	if r.SenderIP == c.ip {
		if r.SenderHW != c.mac {
			c.stats.RxConflicts++
		}
		return
	}
	learnable := r.SenderIP != [4]byte{} && r.SenderHW.IsUnicast()
	merged := false
	if i, ok := c.index[r.SenderIP]; ok && learnable {
		c.update(now, &c.entries[i], r.SenderHW, sink)
		merged = true
	}
	if r.TargetIP != c.ip {
		if !merged {
			c.stats.RxIgnored++
		}
		return
	}
	if !merged && learnable {
		e := c.alloc(r.SenderIP, sink)
		c.stats.Learned++
		c.update(now, e, r.SenderHW, sink)
	}
	if r.Op == OpRequest && r.SenderHW.IsUnicast() {
		c.stats.TxReplies++
		sink.SendARP(now, Repr{Op: OpReply, SenderHW: c.mac, SenderIP: c.ip, TargetHW: r.SenderHW, TargetIP: r.SenderIP}, r.SenderHW)
	}
}

// update records mac for e, makes it reachable and sends what waited.
func (c *Cache) update(now time.Duration, e *entry, mac ether.Addr, sink Sink) {
	if e.state == stateIncomplete {
		c.stats.Resolved++
	} else if e.state == stateReachable && e.mac != mac {
		c.stats.Updated++
	}
	e.state = stateReachable
	e.mac = mac
	e.refreshing = false
	e.requests = 0
	e.deadline = now + c.cfg.ReachableTime
	c.arm(e.deadline)
	for j, m := range e.pending {
		c.stats.PendingSent++
		e.pending[j] = nil
		sink.SendPending(now, m, mac)
	}
	c.pending -= len(e.pending)
	e.pending = e.pending[:0]
	e.pendingBytes = 0
}

// Poll runs the timers due at now: gratuitous announcements, request
// retransmissions, resolutions given up (their packets dropped) and
// entries expired. It returns the next deadline, or Never.
func (c *Cache) Poll(now time.Duration, sink Sink) time.Duration {
	if now < c.next {
		return c.next
	}
	next := Never
	if c.gratuitousLeft > 0 {
		if now >= c.gratuitousAt {
			c.Announce(now, sink)
			c.gratuitousLeft--
			c.gratuitousAt = now + c.cfg.GratuitousInterval
		}
		if c.gratuitousLeft > 0 {
			next = min(next, c.gratuitousAt)
		}
	}
	for i := range c.entries {
		e := &c.entries[i]
		switch e.state {
		case stateIncomplete:
			if now >= e.deadline {
				if e.requests >= c.cfg.MaxRequests {
					c.stats.ResolveTimeouts++
					c.release(int32(i), sink, &c.stats.PendingDropTimeout)
					continue
				}
				e.requests++
				e.deadline = now + c.cfg.RetransmitInterval
				c.stats.TxRequests++
				sink.SendARP(now, Repr{Op: OpRequest, SenderHW: c.mac, SenderIP: c.ip, TargetIP: e.ip}, ether.BroadcastAddr())
			}
			next = min(next, e.deadline)
		case stateReachable:
			if now >= e.deadline {
				c.stats.Expired++
				c.release(int32(i), sink, &c.stats.PendingDropFlushed)
				continue
			}
			next = min(next, e.deadline)
		}
	}
	c.next = next
	return next
}

// Flush drops every entry and every waiting packet (counted as flushed),
// for an interface going down.
func (c *Cache) Flush(sink Sink) {
	for i := range c.entries {
		if c.entries[i].state != stateFree {
			c.release(int32(i), sink, &c.stats.PendingDropFlushed)
		}
	}
	c.gratuitousLeft = 0
	c.next = Never
}

// Insert adds or replaces a static-looking entry resolved now (for tests
// and for scenarios that pre-populate neighbours); it expires like any
// other.
func (c *Cache) Insert(now time.Duration, ip [4]byte, mac ether.Addr, sink Sink) {
	i, ok := c.index[ip]
	var e *entry
	if ok {
		e = &c.entries[i]
	} else {
		e = c.alloc(ip, sink)
	}
	c.update(now, e, mac, sink)
}
