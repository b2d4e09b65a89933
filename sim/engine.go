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

// event is one entry of the queue: when it fires, what runs and its
// argument. Events need no sequence number: the queue keeps events of the
// same instant in the order they were scheduled (see queue.go).
type event struct {
	at  time.Duration
	h   Handler
	arg uint64
}

// Engine owns the virtual clock and the event queue.
type Engine struct {
	now    time.Duration
	q      wheel
	seed   uint64
	fired  uint64
	halted bool
}

// NewEngine returns an engine at time zero whose random streams derive from
// seed.
func NewEngine(seed uint64) *Engine {
	e := &Engine{seed: seed}
	return e
}

// Now returns the current virtual time.
func (e *Engine) Now() time.Duration { return e.now }

// Seed returns the seed the engine was made with.
func (e *Engine) Seed() uint64 { return e.seed }

// Fired returns how many events have run.
func (e *Engine) Fired() uint64 { return e.fired }

// Pending returns how many events are queued.
func (e *Engine) Pending() int { return e.q.n }

// At schedules h to fire at time at with arg. A time in the past is an
// error of the caller's model and panics, since running it would reorder
// causality (and the queue relies on times never going back).
func (e *Engine) At(at time.Duration, h Handler, arg uint64) {
	if at < e.now {
		panic(fmt.Sprintf("sim: event scheduled at %v, before now %v", at, e.now))
	}
	e.q.push(event{at: at, h: h, arg: arg})
}

// After schedules h to fire d from now.
func (e *Engine) After(d time.Duration, h Handler, arg uint64) { e.At(e.now+d, h, arg) }

// NextAt returns the time of the next event, and false if there is none.
func (e *Engine) NextAt() (time.Duration, bool) { return e.q.peek() }

// Step runs the next event, if there is one, and reports whether it did.
func (e *Engine) Step() bool {
	ev, ok := e.q.pop()
	if !ok {
		return false
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
	for !e.halted {
		at, ok := e.q.peek()
		if !ok || at > t {
			break
		}
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
