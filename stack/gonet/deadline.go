package gonet

import (
	"sync"
	"sync/atomic"
	"time"
)

// deadline is a settable deadline whose expiry wakes its waiter through
// the connection's own readiness channel (sig), so that a blocked Read or
// Write waits on one channel, not three: ten thousand connections blocked
// in Read each hold one parked receiver (sudog) and no deadline channels.
// A connection makes its deadlines only when one is first set.
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	gen   uint64 // bumped by every set: a timer of an earlier set is stale
	sig   chan struct{}
	// passed is set when the deadline has expired, cleared when re-armed.
	passed atomic.Bool
}

func newDeadline(sig chan struct{}) *deadline { return &deadline{sig: sig} }

// set arms the deadline at t; the zero time disarms it. A time in the
// past expires it at once.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gen++
	if d.timer != nil {
		d.timer.Stop() // a timer already firing sees gen moved on
		d.timer = nil
	}
	if t.IsZero() {
		d.passed.Store(false)
		return
	}
	if dur := time.Until(t); dur > 0 {
		d.passed.Store(false)
		gen := d.gen
		d.timer = time.AfterFunc(dur, func() { d.fire(gen) })
		return
	}
	d.passed.Store(true)
	signal(d.sig)
}

// fire expires the deadline armed by set number gen, unless a later set
// replaced it.
func (d *deadline) fire(gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen != gen {
		return
	}
	d.passed.Store(true)
	signal(d.sig)
}

// expired reports whether the deadline has passed; a nil deadline (never
// set) has not.
func (d *deadline) expired() bool { return d != nil && d.passed.Load() }
