// Package arpshare hands copies of ARP frames between the stack instances
// of one port, as Gazelle copies ARP packets to every stack thread. NICs
// steer frames that are not IP to queue 0, yet every instance keeps its
// own neighbour cache, so the instance that receives an ARP frame gives
// each of its peers a copy, which the peer handles on its own turn.
// IPv6's Neighbor Solicitations and Advertisements (RFC 4861) are shared
// the same way: they are ARP's counterpart, and RSS hashes each to a single queue.
//
// Both drivers use it: in virtual time one goroutine polls every
// instance, in real time each lcore goroutine polls its own (stack/rt).
// The hand-off is therefore lock-free: one single-producer
// single-consumer ring (internal/spsc) per ordered pair of members, so
// that each ring has exactly one goroutine on either side. A driver
// supplies only how a member learns that frames wait for it (Member.Wake).
package arpshare

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/spsc"
)

// RingSize is the room of each hand-off from one member to another. ARP
// is a few frames a second; 256 absorbs a burst of gratuitous ARPs while
// a peer's turn is late, and what does not fit is dropped and counted.
const RingSize = 256

// drainBurst is how many frames Drain takes from a ring at a time.
const drainBurst = 32

// Member is what the group needs of one member.
type Member struct {
	// Pool is the mempool the member's copies are taken from: its own
	// (on its core's NUMA node), since the copy becomes its mbuf. In real
	// time it must be safe for concurrent use, as the sharing member's
	// goroutine takes from it.
	Pool hw.Mempool
	// Wake is the driver's notify policy: it tells the member's driver,
	// from the sharing member's turn at now, that frames wait, so that
	// the member gets a turn even when nothing else arrives (virtual
	// time: wake its core at now; real time: unpark its lcore). It must
	// be safe to call from the sharing member's goroutine. Nil: none.
	Wake func(now time.Duration)
}

// Group is the members of one port, indexed by queue.
type Group struct {
	members []*member
}

// member is one member's state. Each field has one writer: in is
// produced into by the sharing members (ring in[j] by member j alone) and
// consumed by the member; scratch and buf are the member's own; the
// counters are atomic because sharing members add to them.
type member struct {
	Member
	// in[j] carries copies from member j; in[self] is nil.
	in      []*spsc.Ring[*hw.Mbuf]
	scratch []byte
	buf     [drainBurst]*hw.Mbuf
	// noMbuf counts copies for this member its pool refused, since the
	// last ResetNoMbuf: a refused allocation is the member's no_mbuf.
	noMbuf atomic.Uint64
	// dropped counts every copy for this member that was not handed
	// over (no mbuf, a frame too long for the copy, a full ring), never
	// reset.
	dropped atomic.Uint64
	// waiting counts the copies in the member's rings (added after an
	// enqueue, taken after a drain), so that the member's every turn
	// looks at one word instead of every peer's ring: ARP is a few
	// frames a second, and Drain runs on every poll of every instance.
	waiting atomic.Int64
}

// New makes a group of members, in queue order. Every member needs a
// Pool.
func New(members []Member) *Group {
	g := &Group{members: make([]*member, len(members))}
	for i, m := range members {
		g.members[i] = &member{Member: m, in: make([]*spsc.Ring[*hw.Mbuf], len(members))}
		for j := range members {
			if j != i {
				g.members[i].in[j] = newRing()
			}
		}
	}
	return g
}

// newRing makes one hand-off ring.
func newRing() *spsc.Ring[*hw.Mbuf] {
	r, err := spsc.New[*hw.Mbuf](RingSize)
	if err != nil {
		// RingSize is a constant power of two: spsc.New cannot refuse it.
		panic(fmt.Sprintf("arpshare: %v", err))
	}
	return r
}

// Share hands member from's peers a copy of m, at now on from's turn, if
// m is an ARP frame or an IPv6 Neighbor Solicitation or Advertisement
// (isShared; past one VLAN tag, as the network layer accepts a tagged
// frame), and returns how many copies it handed over. m stays
// the caller's: it is neither freed nor handed back to from. A copy for
// which there is no mbuf or no room is dropped and counted for the peer
// (NoMbuf, Dropped). Only member from's goroutine calls Share(from, ...).
func (g *Group) Share(from int, now time.Duration, m *hw.Mbuf) int {
	if len(g.members) < 2 || !isShared(m.Data()) {
		return 0
	}
	src := g.members[from]
	d := m.Data()
	if m.Next != nil {
		// A chained frame is copied whole; the scratch is the sender's.
		src.scratch = m.Bytes(src.scratch[:0])
		d = src.scratch
	}
	shared := 0
	for j, p := range g.members {
		if j == from {
			continue
		}
		c := p.Pool.Get()
		if c == nil {
			p.noMbuf.Add(1)
			p.dropped.Add(1)
			continue
		}
		if err := c.SetData(d); err != nil {
			c.Free()
			p.dropped.Add(1)
			continue
		}
		if !p.in[from].Enqueue(c) {
			c.Free()
			p.dropped.Add(1)
			continue
		}
		p.waiting.Add(1)
		shared++
		if p.Wake != nil {
			p.Wake(now)
		}
	}
	return shared
}

// Drain hands member to's waiting copies to handle, which takes each
// mbuf, on to's turn, and returns how many it handed. It takes what
// waited when it started, so that peers sharing meanwhile cannot keep a
// turn going. Only member to's goroutine calls Drain(to, ...).
func (g *Group) Drain(to int, handle func(*hw.Mbuf)) int {
	if len(g.members) < 2 {
		return 0
	}
	p := g.members[to]
	if p.waiting.Load() <= 0 {
		return 0
	}
	total := 0
	for _, r := range p.in {
		if r == nil {
			continue
		}
		for left := r.Count(); left > 0; {
			n := r.DequeueBurst(p.buf[:min(left, drainBurst)])
			if n == 0 {
				break
			}
			left -= n
			total += n
			for i, m := range p.buf[:n] {
				p.buf[i] = nil
				handle(m)
			}
		}
	}
	p.waiting.Add(int64(-total))
	return total
}

// NoMbuf returns the copies for member to that its pool refused since
// the last ResetNoMbuf. Safe from any goroutine.
func (g *Group) NoMbuf(to int) uint64 { return g.members[to].noMbuf.Load() }

// ResetNoMbuf starts NoMbuf(to) again from zero (a new measurement
// window).
func (g *Group) ResetNoMbuf(to int) { g.members[to].noMbuf.Store(0) }

// Dropped returns every copy for member to that was not handed over,
// whatever the reason, since the group was made. Safe from any goroutine.
func (g *Group) Dropped(to int) uint64 { return g.members[to].dropped.Load() }
