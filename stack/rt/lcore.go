package rt

import (
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/sockring"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// ErrStopped is returned by requests to an lcore that has stopped.
var ErrStopped = errors.New("rt: lcore stopped")

// ConnHandler receives a connection's readiness on its lcore.
type ConnHandler interface {
	// ConnEvent is called on the lcore with the conditions that became
	// true since the last call.
	ConnEvent(lc *Lcore, m tcp.EventMask)
	// LcoreStopped is called on the lcore when it stops with the
	// connection still watched: the socket must fail its waiters.
	LcoreStopped()
}

// IdleReleaser is an optional part of a ConnHandler: ReleaseIdle gives
// back the memory the connection's socket rings hold while drained
// (stack/gonet's rings, lent by RingStorage). The lcore calls it for
// every watched connection once every sweepEvery of its clock, so that
// an idle connection holds no ring memory while a busy one keeps its
// storage between messages at no cost per message.
type IdleReleaser interface {
	ReleaseIdle()
}

// sweepEvery is how often the lcore gives drained rings' storage back
// (a ring written since the last sweep keeps it until the next):
// often enough that the connections of a workload that went idle hold
// none within a fifth of a second, rarely enough that the sweep (one
// call per connection) costs little of a busy lcore.
const sweepEvery = 100 * time.Millisecond

// ListenerHandler receives a listener's readiness on its lcore.
type ListenerHandler interface {
	ListenerEvent(lc *Lcore, m tcp.EventMask)
	LcoreStopped()
}

// LcoreStats are one lcore's driver counters.
type LcoreStats struct {
	Loops    uint64 `json:"loops"`
	Parks    uint64 `json:"parks"`
	Wakeups  uint64 `json:"wakeups"`
	TasksRun uint64 `json:"tasks_run"`
	Events   uint64 `json:"events"`
	// ParkedNanos is the time spent parked.
	ParkedNanos int64 `json:"parked_nanos"`
	// RingStorage counts the socket-ring storage the lcore's free list
	// lent and took back (RingStorage).
	RingStorage sockring.StorageStats `json:"ring_storage"`
}

// Lcore is one stack thread: a goroutine locked to an OS thread that owns
// an lstack.Instance.
type Lcore struct {
	id    int
	rt    *Runtime
	inst  *lstack.Instance
	meter *Meter
	cfg   Config

	tasks    taskList
	wake     chan struct{}
	parked   atomic.Bool
	pending  atomic.Bool
	stopping atomic.Bool
	done     chan struct{}

	conns     map[*tcp.Conn]ConnHandler
	listeners map[*tcp.Listener]ListenerHandler
	evbuf     []tcp.Event

	nextPort uint16
	stats    LcoreStats

	// ringStore lends the socket rings of the lcore's connections their
	// storage while they hold bytes (RingStorage); swept is the lcore
	// clock of the last sweep of drained rings (IdleReleaser).
	ringStore sockring.Storage
	swept     time.Duration
}

// ID returns the lcore's index (and queue).
func (lc *Lcore) ID() int { return lc.id }

// Runtime returns the runtime the lcore belongs to.
func (lc *Lcore) Runtime() *Runtime { return lc.rt }

// Instance returns the stack instance; only code running on the lcore
// (tasks, handlers) may use it.
func (lc *Lcore) Instance() *lstack.Instance { return lc.inst }

// Now returns the lcore's clock.
func (lc *Lcore) Now() time.Duration { return lc.meter.Now() }

// Meter returns the lcore's meter.
func (lc *Lcore) Meter() *Meter { return lc.meter }

// RingStorage returns the free list of socket-ring storage shared by
// the lcore's connections (stack/gonet), so that an idle connection
// holds no ring memory. Safe from any goroutine.
func (lc *Lcore) RingStorage() *sockring.Storage { return &lc.ringStore }

// Done is closed when the lcore has stopped.
func (lc *Lcore) Done() <-chan struct{} { return lc.done }

// Kick queues t to run on the lcore; a task already queued is not queued
// twice. Safe from any goroutine.
func (lc *Lcore) Kick(t *Task) {
	if lc.tasks.push(t) {
		lc.Wake()
	}
}

// Submit runs fn once on the lcore. It fails when the lcore is stopping;
// a caller that waits for fn must also watch Done.
func (lc *Lcore) Submit(fn func(*Lcore)) error {
	if lc.stopping.Load() {
		return ErrStopped
	}
	lc.Kick(NewTask(fn))
	return nil
}

// Wake makes a parked lcore poll again. Safe from any goroutine and cheap
// when the lcore is running: devices call it on frame arrival.
func (lc *Lcore) Wake() {
	lc.pending.Store(true)
	if lc.parked.Load() {
		select {
		case lc.wake <- struct{}{}:
		default:
		}
	}
}

// Watch registers h for c's events. Lcore only.
func (lc *Lcore) Watch(c *tcp.Conn, h ConnHandler) { lc.conns[c] = h }

// Unwatch forgets c. Lcore only.
func (lc *Lcore) Unwatch(c *tcp.Conn) { delete(lc.conns, c) }

// WatchListener registers h for l's events. Lcore only.
func (lc *Lcore) WatchListener(l *tcp.Listener, h ListenerHandler) { lc.listeners[l] = h }

// UnwatchListener forgets l. Lcore only.
func (lc *Lcore) UnwatchListener(l *tcp.Listener) { delete(lc.listeners, l) }

// Stats returns the driver counters; call it on the lcore or after it
// stopped (Runtime.Snapshot does).
func (lc *Lcore) Stats() LcoreStats {
	s := lc.stats
	s.RingStorage = lc.ringStore.Stats()
	return s
}

func (lc *Lcore) runTasks() bool {
	t := lc.tasks.takeAll()
	if t == nil {
		return false
	}
	for t != nil {
		next := t.next
		t.next = nil
		t.queued.Store(false)
		lc.stats.TasksRun++
		t.fn(lc)
		t = next
	}
	return true
}

func (lc *Lcore) drainEvents() bool {
	lc.evbuf = lc.inst.TCP().Events(lc.evbuf[:0])
	if len(lc.evbuf) == 0 {
		return false
	}
	for i, e := range lc.evbuf {
		lc.stats.Events++
		if e.Conn != nil {
			if h := lc.conns[e.Conn]; h != nil {
				h.ConnEvent(lc, e.Mask)
			}
		} else if h := lc.listeners[e.Listener]; h != nil {
			h.ListenerEvent(lc, e.Mask)
		}
		lc.evbuf[i] = tcp.Event{}
	}
	return true
}

// sweep gives back the ring storage of every drained connection.
func (lc *Lcore) sweep(now time.Duration) {
	lc.swept = now
	for _, h := range lc.conns {
		if r, ok := h.(IdleReleaser); ok {
			r.ReleaseIdle()
		}
	}
}

// loop is the lcore's poll loop.
func (lc *Lcore) loop(started chan<- error) {
	if !lc.cfg.NoLockOSThread || lc.cfg.ThreadHook != nil {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	defer close(lc.done)
	if lc.cfg.ThreadHook != nil {
		done, err := lc.cfg.ThreadHook(lc.id)
		if err != nil {
			started <- err
			return
		}
		if done != nil {
			defer done()
		}
	}
	lc.inst.Start(lc.meter.Now())
	started <- nil
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	idleSince := lc.meter.Now()
	for !lc.stopping.Load() {
		lc.stats.Loops++
		lc.pending.Store(false)
		worked := lc.runTasks()
		w, next := lc.inst.Poll(lc.meter)
		worked = lc.drainEvents() || w || worked
		lc.meter.Publish()
		now := lc.meter.Now()
		if now-lc.swept >= sweepEvery {
			lc.sweep(now)
		}
		if worked {
			idleSince = now
			continue
		}
		if lc.cfg.Busy || now-idleSince < lc.cfg.Spin {
			// Spin cooperatively: with no spare CPU the application
			// goroutines that would hand the lcore work run on the same
			// Ps, and a spinning lcore that never yields would make
			// them wait for the scheduler's 10 ms preemption.
			runtime.Gosched()
			continue
		}
		d := min(next-now, lc.cfg.MaxPark)
		if d <= 0 {
			continue
		}
		lc.parked.Store(true)
		if lc.pending.Load() || !lc.tasks.empty() || lc.stopping.Load() {
			lc.parked.Store(false)
			continue
		}
		lc.stats.Parks++
		timer.Reset(d)
		select {
		case <-lc.wake:
			lc.stats.Wakeups++
		case <-timer.C:
		}
		timer.Stop()
		lc.parked.Store(false)
		after := lc.meter.Now()
		lc.meter.Idle(after - now)
		lc.stats.ParkedNanos += int64(after - now)
		idleSince = after
	}
	// Run what is queued so that waiters get answers, then fail the
	// sockets still open.
	lc.runTasks()
	lc.meter.Publish()
	for _, h := range lc.conns {
		h.LcoreStopped()
	}
	for _, h := range lc.listeners {
		h.LcoreStopped()
	}
}
