package sim

import "time"

// Timer fires a handler at a time that can be moved or cancelled. Moving
// or cancelling does not touch the queue: the old event stays and is
// ignored when it fires (its generation no longer matches), which keeps
// Reset and Stop O(1) and allocation-free.
type Timer struct {
	eng   *Engine
	h     Handler
	arg   uint64
	gen   uint64
	at    time.Duration
	armed bool
}

// NewTimer returns a stopped timer that will call h with arg.
func NewTimer(e *Engine, h Handler, arg uint64) *Timer {
	return &Timer{eng: e, h: h, arg: arg}
}

// Reset arms the timer to fire at time at, replacing any earlier setting.
func (t *Timer) Reset(at time.Duration) {
	t.gen++
	t.at = at
	t.armed = true
	t.eng.At(at, t, t.gen)
}

// ResetEarlier arms the timer for at unless it is already armed for an
// earlier time. It serves doorbells: many wake-ups, one event.
func (t *Timer) ResetEarlier(at time.Duration) {
	if t.armed && t.at <= at {
		return
	}
	t.Reset(at)
}

// Stop disarms the timer.
func (t *Timer) Stop() { t.gen++; t.armed = false }

// Armed reports whether the timer will fire, and when.
func (t *Timer) Armed() (time.Duration, bool) { return t.at, t.armed }

// Fire implements Handler; it runs the timer's handler if gen is current.
func (t *Timer) Fire(e *Engine, gen uint64) {
	if gen != t.gen || !t.armed {
		return
	}
	t.armed = false
	t.h.Fire(e, t.arg)
}
