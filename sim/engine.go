package sim

import (
	"fmt"
	"time"
)

// Handler is something that runs when its event fires. Models implement it
// on a long-lived value (a link, a core, a timer) so that scheduling an
// event allocates nothing.
type Handler interface {
	// Fire runs the event. arg is the value given when it was scheduled.
	Fire(e *Engine, arg uint64)
}

// HandlerFunc adapts a function to Handler. Converting a closure to a
// Handler allocates; hot paths use a method on a long-lived value instead.
type HandlerFunc func(e *Engine, arg uint64)

// Fire calls f.
func (f HandlerFunc) Fire(e *Engine, arg uint64) { f(e, arg) }

// event is one entry of the queue. Events are ordered by time, then by the
// sequence number they were given when scheduled, so events at the same
// instant run in the order they were scheduled.
type event struct {
	at  time.Duration
	seq uint64
	h   Handler
	arg uint64
}

func (a *event) before(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Engine owns the virtual clock and the event queue.
type Engine struct {
	now    time.Duration
	seq    uint64
	queue  []event // 4-ary min-heap
	seed   uint64
	fired  uint64
	halted bool
}

// NewEngine returns an engine at time zero whose random streams derive from
// seed.
func NewEngine(seed uint64) *Engine {
	return &Engine{seed: seed, queue: make([]event, 0, 1024)}
}

// Now returns the current virtual time.
func (e *Engine) Now() time.Duration { return e.now }

// Seed returns the seed the engine was made with.
func (e *Engine) Seed() uint64 { return e.seed }

// Fired returns how many events have run.
func (e *Engine) Fired() uint64 { return e.fired }

// Pending returns how many events are queued.
func (e *Engine) Pending() int { return len(e.queue) }

// At schedules h to fire at time at with arg. A time in the past is an
// error of the caller's model and panics, since running it would reorder
// causality.
func (e *Engine) At(at time.Duration, h Handler, arg uint64) {
	if at < e.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", at, e.now))
	}
	e.seq++
	e.queue = append(e.queue, event{at: at, seq: e.seq, h: h, arg: arg})
	e.up(len(e.queue) - 1)
}

// After schedules h to fire d from now.
func (e *Engine) After(d time.Duration, h Handler, arg uint64) { e.At(e.now+d, h, arg) }

// NextAt returns the time of the next event, and false if there is none.
func (e *Engine) NextAt() (time.Duration, bool) {
	if len(e.queue) == 0 {
		return 0, false
	}
	return e.queue[0].at, true
}

// Step runs the next event, if there is one, and reports whether it did.
func (e *Engine) Step() bool {
	if len(e.queue) == 0 {
		return false
	}
	ev := e.queue[0]
	last := len(e.queue) - 1
	e.queue[0] = e.queue[last]
	e.queue[last] = event{}
	e.queue = e.queue[:last]
	if last > 0 {
		e.down(0)
	}
	e.now = ev.at
	e.fired++
	ev.h.Fire(e, ev.arg)
	return true
}

// RunUntil runs every event at or before t, then sets the clock to t.
// It stops early if Halt is called.
func (e *Engine) RunUntil(t time.Duration) {
	e.halted = false
	for !e.halted && len(e.queue) > 0 && e.queue[0].at <= t {
		e.Step()
	}
	if !e.halted && e.now < t {
		e.now = t
	}
}

// Run runs until no event is left or Halt is called.
func (e *Engine) Run() {
	e.halted = false
	for !e.halted && e.Step() {
	}
}

// Halt stops Run or RunUntil after the event that is running.
func (e *Engine) Halt() { e.halted = true }

// up moves the event at i towards the root until its parent is earlier.
// It moves a hole rather than swapping, so each event is written once.
func (e *Engine) up(i int) {
	q := e.queue
	ev := q[i]
	for i > 0 {
		p := (i - 1) / 4
		if !ev.before(&q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = ev
}

// down moves the event at i towards the leaves until no child is earlier.
func (e *Engine) down(i int) {
	q := e.queue
	n := len(q)
	ev := q[i]
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		best := first
		for c := first + 1; c < first+4 && c < n; c++ {
			if q[c].before(&q[best]) {
				best = c
			}
		}
		if !q[best].before(&ev) {
			break
		}
		q[i] = q[best]
		i = best
	}
	q[i] = ev
}
