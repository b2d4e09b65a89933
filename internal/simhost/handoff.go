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
type Handoff struct {
	eng  *sim.Engine
	ring *sockring.Ring
	wake func(at time.Duration)
	// due are the hand-offs not yet delivered, in the producer's order
	// (its clock only moves forward); head is the first.
	due  []due
	head int
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
	return &Handoff{eng: eng, wake: wake}
}

// Handoff implements sockring.Handoff.
func (h *Handoff) Handoff(r *sockring.Ring, tail uint64, at time.Duration) {
	h.ring = r
	at = max(at, h.eng.Now())
	h.due = append(h.due, due{tail: tail, at: at})
	h.eng.At(at, h, tail)
}

// Fire implements sim.Handler: the publication. The doorbell rings only
// when it made bytes visible (a consumer that caught up already saw
// them).
func (h *Handoff) Fire(e *sim.Engine, tail uint64) {
	h.drop(tail)
	if h.ring.Publish(tail) && h.wake != nil {
		h.wake(e.Now())
	}
}

// CatchUp implements sockring.CatchUpper: what was handed off by the
// consumer's clock now is visible to it.
func (h *Handoff) CatchUp(r *sockring.Ring, now time.Duration) {
	var tail uint64
	found := false
	for h.head < len(h.due) && h.due[h.head].at <= now {
		tail, found = h.due[h.head].tail, true
		h.head++
	}
	h.compact()
	if found {
		r.Publish(tail)
	}
}

// drop forgets the hand-offs up to tail.
func (h *Handoff) drop(tail uint64) {
	for h.head < len(h.due) && h.due[h.head].tail <= tail {
		h.head++
	}
	h.compact()
}

// compact reuses the queue's storage once it is empty.
func (h *Handoff) compact() {
	if h.head == len(h.due) {
		h.due, h.head = h.due[:0], 0
	}
}
