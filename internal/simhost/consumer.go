package simhost

import (
	"time"

	"github.com/savanna-sim/savanna/sim"
)

// Consumer is the hand-offs one consumer serves (a stack thread: the
// send rings and calls of every socket of its bridge), kept in a binary
// min-heap by the time the first of each is due. A consumer's clock
// runs ahead of the engine during its turn, and it must see every
// hand-off due by its clock (Handoff.CatchUp); with a thousand sockets
// that each have a call on its way, catching each one up on every poll
// was a fifth of a run's CPU. CatchUp instead pops only the hand-offs
// that came due, and a hand-off costs two heap operations (in when it
// is the first on its way, out or down when it is delivered), with no
// allocation once the heap's array has grown to the sockets in flight.
type Consumer struct {
	eng  *sim.Engine
	heap []entry
}

// entry is a hand-off in the heap with the time its first delivery is
// due, kept beside it so that sifting compares within one array.
type entry struct {
	at time.Duration
	h  *Handoff
}

// NewConsumer returns a consumer on eng with no hand-offs.
func NewConsumer(eng *sim.Engine) *Consumer { return &Consumer{eng: eng} }

// NewHandoff returns a hand-off to c (see the package's NewHandoff for
// wake); arrived, when not nil, is called on every delivery that made
// bytes visible, whether the producer's event made it or the
// consumer's catch-up, so that the consumer can keep a list of what
// became ready instead of looking at every ring.
func (c *Consumer) NewHandoff(wake func(at time.Duration), arrived func()) *Handoff {
	return &Handoff{eng: c.eng, wake: wake, c: c, idx: -1, arrived: arrived}
}

// CatchUp delivers every hand-off due by now, the consumer's clock: each
// of its rings sees what its producer handed off by then, as
// sockring.Ring.Sync(now) on each would show it, and no doorbell rings
// for them.
func (c *Consumer) CatchUp(now time.Duration) {
	for len(c.heap) > 0 && c.heap[0].at <= now {
		h := c.heap[0].h
		if !h.catchUp(h.ring, now) { // moves h down or out of the heap
			// Nothing was due after all: the entry's time is stale,
			// which moved() prevents; refresh it rather than loop.
			c.fix(h)
		}
	}
}

// Pending returns the hand-offs with something on its way.
func (c *Consumer) Pending() int { return len(c.heap) }

// push adds h, which has just got its first hand-off on its way.
func (c *Consumer) push(h *Handoff) {
	c.heap = append(c.heap, entry{at: h.next(), h: h})
	c.up(len(c.heap) - 1)
}

// remove takes h out of the heap.
func (c *Consumer) remove(h *Handoff) {
	i, last := h.idx, len(c.heap)-1
	h.idx = -1
	if i != last {
		c.heap[i] = c.heap[last]
		c.heap[i].h.idx = i
	}
	c.heap[last] = entry{}
	c.heap = c.heap[:last]
	if i != last {
		c.fixAt(i)
	}
}

// fix restores the heap after h's first due time changed.
func (c *Consumer) fix(h *Handoff) {
	if h.idx < 0 {
		c.push(h)
		return
	}
	c.heap[h.idx].at = h.next()
	c.fixAt(h.idx)
}

func (c *Consumer) fixAt(i int) {
	if !c.down(i) {
		c.up(i)
	}
}

func (c *Consumer) up(i int) {
	e := c.heap[i]
	for i > 0 {
		p := (i - 1) / 2
		if c.heap[p].at <= e.at {
			break
		}
		c.heap[i] = c.heap[p]
		c.heap[i].h.idx = i
		i = p
	}
	c.heap[i] = e
	e.h.idx = i
}

// down sifts the entry at i down and reports whether it moved.
func (c *Consumer) down(i int) bool {
	e := c.heap[i]
	start, n := i, len(c.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && c.heap[r].at < c.heap[l].at {
			m = r
		}
		if c.heap[m].at >= e.at {
			break
		}
		c.heap[i] = c.heap[m]
		c.heap[i].h.idx = i
		i = m
	}
	c.heap[i] = e
	e.h.idx = i
	return i != start
}
