package lstack

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Epoll is one application thread's epoll over sockets of the asymmetric
// model (Bridge), for an event loop on a core of its own that serves many
// connections: Redis's ae on a thread that is not a stack lcore. It is
// Gazelle's lstack epoll for such threads (lstack_epoll.c): the stack
// thread that makes a socket ready puts it on the epoll's ready list
// (add_sock_event) and, when the thread sleeps in lstack_epoll_wait's
// sem_timedwait, posts its semaphore (a futex wake); the thread's wait
// takes the list. On a kernel-stack host the same calls are epoll_wait
// and the softirq's wake-up of the thread blocked in ep_poll
// (fs/eventpoll.c ep_poll_callback), as the binding's decorators price
// them.
//
// Readiness is level-triggered, as Redis's ae uses epoll: a socket with
// bytes left after a read stays ready (Requeue).
type Epoll struct {
	in *Instance
	// ready are the sockets with readiness not yet taken, in the order
	// they became ready; each is on it once (Socket.epReady).
	ready []*Socket
	// accepted are connections the stack threads accepted for the
	// thread and it has not taken yet (the listener's readiness).
	accepted []*Socket
	// waiter wakes the thread while it sleeps in a wait that found
	// nothing; slept says its last wait slept.
	waiter func(at time.Duration)
	slept  bool
	// posted says a stack thread already paid the sleeping thread's
	// wake while the bytes that wake it are on their way.
	posted bool
	stats  EpollStats
}

// EpollStats are an Epoll's counters.
type EpollStats struct {
	// Waits are the waits (epoll_wait calls); Events the sockets they
	// returned; Sleeps the waits that found nothing and slept; Wakeups
	// the sleeps a stack thread ended (a futex wake it paid for).
	Waits   uint64 `json:"waits"`
	Events  uint64 `json:"events"`
	Sleeps  uint64 `json:"sleeps"`
	Wakeups uint64 `json:"wakeups"`
	// Accepted are the connections handed to the thread.
	Accepted uint64 `json:"accepted"`
}

// NewEpoll returns an empty epoll of a thread whose calls are priced as
// in's applications' are (in's SetAppMeter decorator and its mode: the
// bridges whose sockets join it must be of instances of the same host).
func NewEpoll(in *Instance) *Epoll { return &Epoll{in: in} }

// Stats returns the counters.
func (ep *Epoll) Stats() EpollStats { return ep.stats }

// ResetStats zeroes the counters.
func (ep *Epoll) ResetStats() { ep.stats = EpollStats{} }

// Accepted is an onAccept for Bridge.Listen: the connection joins the
// epoll and waits for the thread to take it (Accept), as a listening
// socket's readiness does.
func (ep *Epoll) Accepted(_ int, s *Socket) {
	s.ep = ep
	ep.accepted = append(ep.accepted, s)
	ep.stats.Accepted++
	ep.wakeThread(s.b.m)
}

// Accept appends the connections accepted since the last call to dst,
// charging the thread's accept(2) for each and its epoll_ctl adding the
// socket to the interest list (Redis's acceptTcpHandler, then
// connSetReadHandler's aeCreateFileEvent).
func (ep *Epoll) Accept(m hw.Meter, dst []*Socket) []*Socket {
	ep.in.pay(m)
	if len(ep.accepted) == 0 {
		return dst
	}
	am := ep.in.app(m)
	am.Charge(CostSocketCall, 2*int64(len(ep.accepted)))
	dst = append(dst, ep.accepted...)
	clear(ep.accepted)
	ep.accepted = ep.accepted[:0]
	return dst
}

// Wait is one epoll_wait of the thread: it appends the ready sockets to
// dst and charges the call and each event it returned. When nothing is
// ready (and no connection waits to be accepted) the thread sleeps until
// a stack thread makes a socket ready or the bytes of one reach its
// core; wake is called then with the time the thread is runnable (in
// virtual time, its core's Wake). busy says the thread has other work
// (replies it could not write yet): it does not sleep.
func (ep *Epoll) Wait(m hw.Meter, dst []*Socket, busy bool, wake func(at time.Duration)) []*Socket {
	ep.in.pay(m)
	am := ep.in.app(m)
	n := len(ep.ready)
	if ep.slept {
		// The wait that slept returns now: the same call, and the
		// thread's switch back onto its core.
		ep.slept = false
		am.Charge(hw.CostContextSwitch, 1)
	} else {
		am.Charge(CostEpollWait, 1)
		ep.stats.Waits++
	}
	if n > 0 {
		am.Charge(CostEpollEvent, int64(n))
		ep.stats.Events += uint64(n)
		for _, s := range ep.ready {
			s.epReady = false
		}
		dst = append(dst, ep.ready...)
		clear(ep.ready)
		ep.ready = ep.ready[:0]
		return dst
	}
	if busy || len(ep.accepted) > 0 {
		return dst
	}
	// Nothing ready: the thread sleeps in the wait. lstack's is a
	// sem_timedwait (a futex); the kernel's is ep_poll inside the
	// epoll_wait already charged.
	if !ep.in.mode.Sleeps() {
		am.Charge(hw.CostSyscall, 1)
		am.Charge(hw.CostSyscallFutex, 1)
	}
	ep.stats.Sleeps++
	ep.slept = true
	ep.waiter = wake
	return dst
}

// Requeue puts s back on the ready list: it still has bytes the thread
// did not read (level-triggered readiness).
func (ep *Epoll) Requeue(s *Socket) { ep.mark(s) }

// mark puts s on the ready list once.
func (ep *Epoll) mark(s *Socket) {
	if s.epReady || s.done {
		return
	}
	s.epReady = true
	ep.ready = append(ep.ready, s)
}

// notify is a stack thread's report that s became readable, on its
// meter m. Bytes still on their way to the thread's core (a hand-off in
// flight) make the socket ready when they arrive (delivered): an
// epoll_wait never returns a socket whose read would find nothing. A
// sleeping thread's wake is the stack thread's work all the same (its
// sem_post, a futex wake, and the scheduler's try_to_wake_up), paid now,
// once per sleep.
func (ep *Epoll) notify(m hw.Meter, s *Socket) {
	if s.p.Rx().InFlight() == 0 {
		ep.mark(s)
		ep.wakeThread(m)
		return
	}
	if ep.waiter != nil && !ep.posted && m != nil {
		ep.posted = true
		ep.chargeWake(m)
	}
}

// delivered is s's receive-ring hand-off reaching the thread's core: the
// socket is ready, and a thread that slept runs again (its wake was
// paid by the stack thread's notify, or, when its sem_post found the
// thread awake, is not needed).
func (ep *Epoll) delivered(at time.Duration, s *Socket) {
	ep.mark(s)
	if w := ep.waiter; w != nil {
		ep.waiter, ep.posted = nil, false
		w(at)
	}
}

// wakeThread wakes the sleeping thread, charging the wake to the stack
// thread's meter m (nil: outside a stack thread's turn, nothing charged).
func (ep *Epoll) wakeThread(m hw.Meter) {
	w := ep.waiter
	if w == nil {
		return
	}
	var at time.Duration
	if m != nil {
		if !ep.posted {
			ep.chargeWake(m)
		}
		at = m.Now()
	}
	ep.waiter, ep.posted = nil, false
	w(at)
}

// chargeWake charges a stack thread's wake of the sleeping thread.
func (ep *Epoll) chargeWake(m hw.Meter) {
	m.Charge(hw.CostSyscall, 1)
	m.Charge(hw.CostSyscallFutex, 1)
	// The thread's core is not the stack thread's (an Epoll serves an
	// event loop on a core of its own): a cross-core wake-up.
	m.Charge(hw.CostWakeup, 1)
	ep.stats.Wakeups++
}

// Control charges n changes to the thread's interest list (epoll_ctl),
// as an event loop that switches a socket between waiting to read and
// waiting to write makes (ae.c's aeCreateFileEvent and
// aeDeleteFileEvent; see EventSet.Control). Each is an epoll_ctl_user,
// epoll_ctl(2) on a kernel host; the epoll itself needs no change, since
// its sockets report every readiness.
func (ep *Epoll) Control(m hw.Meter, n int64) {
	ep.in.pay(m)
	if n > 0 {
		ep.in.app(m).Charge(CostEpollCtl, n)
	}
}
