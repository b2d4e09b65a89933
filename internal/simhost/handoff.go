package simhost

import (
	"time"

	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/stack/sockring"
)

// Handoff is a sockring ring's hand-off in virtual time. A simulated
// core's turn runs at one instant of the engine while its clock advances
// with what it charges, so bytes a producer writes at its clock t must
// not reach a consumer on another core before t: the hand-off schedules
// the publication of the ring's tail at t, through an engine event whose
// argument is the tail (one Handoff per ring, so nothing allocates per
// hand-off), and then rings the consumer's doorbell. A consumer whose
// own clock has passed t sees the bytes at once (CatchUp), as it would
// on real cores: visibility follows the clocks of both sides, and the
// product's rings carry no time.
//
// A hand-off made by a Consumer also keeps its place in the consumer's
// heap of due times, so that the consumer catches up every ring it
// serves by looking only at those due by its clock (Consumer.CatchUp).
type Handoff struct {
	eng  *sim.Engine
	ring *sockring.Ring
	wake func(at time.Duration)
	// due are the hand-offs not yet delivered, in the producer's order
	// (its clock only moves forward); head is the first.
	due  []due
	head int
	// c is the consumer whose heap holds the hand-off while it has one
	// due (at index idx), nil for a hand-off of its own (NewHandoff) or
	// one that left its consumer (Leave); arrived is told of each
	// delivery that made bytes visible.
	c       *Consumer
	idx     int
	arrived func()
}

// due is one hand-off on its way.
type due struct {
	tail uint64
	at   time.Duration
}

// NewHandoff returns a ring's hand-off on eng; wake, when not nil, is
// the consumer's doorbell (sim.Core.Wake), rung when a publication makes
// bytes visible.
func NewHandoff(eng *sim.Engine, wake func(at time.Duration)) *Handoff {
	return &Handoff{eng: eng, wake: wake, idx: -1}
}

// Handoff implements sockring.Handoff.
func (h *Handoff) Handoff(r *sockring.Ring, tail uint64, at time.Duration) {
	h.ring = r
	at = max(at, h.eng.Now())
	first := h.head == len(h.due)
	h.due = append(h.due, due{tail: tail, at: at})
	h.eng.At(at, h, tail)
	if first && h.c != nil {
		h.c.push(h)
	}
}

// Fire implements sim.Handler: the publication. The doorbell rings only
// when it made bytes visible (a consumer that caught up already saw
// them).
func (h *Handoff) Fire(e *sim.Engine, tail uint64) {
	h.drop(tail)
	if h.ring.Publish(tail) {
		if h.arrived != nil {
			h.arrived()
		}
		if h.wake != nil {
			h.wake(e.Now())
		}
	}
}

// CatchUp implements sockring.CatchUpper: what was handed off by the
// consumer's clock now is visible to it.
func (h *Handoff) CatchUp(r *sockring.Ring, now time.Duration) { h.catchUp(r, now) }

// catchUp is CatchUp; it reports whether anything was due.
func (h *Handoff) catchUp(r *sockring.Ring, now time.Duration) bool {
	var tail uint64
	found := false
	for h.head < len(h.due) && h.due[h.head].at <= now {
		tail, found = h.due[h.head].tail, true
		h.head++
	}
	if !found {
		return false
	}
	h.moved()
	if r.Publish(tail) && h.arrived != nil {
		h.arrived()
	}
	return true
}

// Leave takes the hand-off out of its consumer's catch-up: the consumer
// is done with the ring, and what is still on its way is delivered by
// its event alone (a no-op for a hand-off without a consumer).
func (h *Handoff) Leave() {
	if h.c == nil {
		return
	}
	if h.idx >= 0 {
		h.c.remove(h)
	}
	h.c, h.arrived = nil, nil
}

// drop forgets the hand-offs up to tail.
func (h *Handoff) drop(tail uint64) {
	moved := false
	for h.head < len(h.due) && h.due[h.head].tail <= tail {
		h.head++
		moved = true
	}
	if moved {
		h.moved()
	}
}

// moved follows a change of the first hand-off due: the queue's storage
// is reused once it is empty, and the consumer's heap learns the new
// first due time.
func (h *Handoff) moved() {
	empty := h.head == len(h.due)
	if empty {
		h.due, h.head = h.due[:0], 0
	}
	if h.c == nil {
		return
	}
	if empty {
		h.c.remove(h)
		return
	}
	h.c.fix(h)
}

// next returns the time the first hand-off on its way is due.
func (h *Handoff) next() time.Duration { return h.due[h.head].at }
