package lstack

import (
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// EventSet is one application's epoll instance on the instance, as
// Gazelle gives each application its own: the listeners it opens, the
// connections it accepts from them and those it opens itself report
// their readiness to it alone, so several applications share an
// instance (a Redis server and an HTTP server on one host, wrk and
// redis-benchmark on one client core) without taking each other's
// events. Its socket calls are charged as the instance's own.
type EventSet struct {
	in  *Instance
	set tcp.EventSet
	// slept says this application found nothing on its last wait (a
	// kernel thread that went to sleep; see Wait).
	slept bool
	// ready counts the events Events handed out since the last Wait:
	// the ready list that wait returned, priced per event.
	ready int64
}

// NewEventSet returns an empty event set of an application on the
// instance.
func (in *Instance) NewEventSet() *EventSet { return &EventSet{in: in} }

// Instance returns the instance the set's sockets live on.
func (es *EventSet) Instance() *Instance { return es.in }

// Listen opens a listening socket on the instance's address, as
// Instance.Listen does, that reports to the set.
func (es *EventSet) Listen(port uint16, backlog int) (*tcp.Listener, error) {
	l, err := es.in.Listen(port, backlog)
	if err != nil {
		return nil, err
	}
	es.set.AddListener(l, nil)
	return l, nil
}

// AcceptAll accepts every connection waiting on l, a listener of the
// set, until the accept queue is empty (an event loop's accept loop,
// each accept(2) charged, the last that finds none too). Each joins the
// set with the data accepted returns for it, which every later Event of
// the connection carries.
func (es *EventSet) AcceptAll(m hw.Meter, l *tcp.Listener, accepted func(c *tcp.Conn) any) int {
	n := 0
	for {
		c, ok := es.in.Accept(m, l)
		if !ok {
			return n
		}
		n++
		es.set.Add(c, accepted(c))
	}
}

// Connect opens a connection as Instance.Connect does; it joins the set
// with data, which its Events carry.
func (es *EventSet) Connect(m hw.Meter, localPort uint16, remote tcp.Addr, data any) (*tcp.Conn, error) {
	c, err := es.in.Connect(m, localPort, remote)
	if err != nil {
		return nil, err
	}
	es.set.Add(c, data)
	return c, nil
}

// Events appends the set's readiness events to dst and empties its
// ready list. The wait itself, and each event it returned, is charged
// by the next Wait.
func (es *EventSet) Events(dst []tcp.Event) []tcp.Event {
	n := len(dst)
	dst = es.set.Events(dst)
	es.ready += int64(len(dst) - n)
	return dst
}

// Wait charges one readiness wait (epoll_wait) of the application's
// event loop that found ready sockets or not, and one epoll_event_user
// for each event Events returned since the last Wait: Linux's
// ep_send_events polls and copies out every ready item, so a wait's
// cost grows with the events it returns (fs/eventpoll.c). When the
// instance's mode has threads sleep, the application's thread sleeps
// when it found none, and is woken (a wake-up and a context switch)
// when it next finds some.
func (es *EventSet) Wait(m hw.Meter, ready bool) {
	es.in.wait(m, ready, es.ready, &es.slept)
	es.ready = 0
}

// Control charges n changes to the set's interest list (epoll_ctl), as
// an event loop that switches a socket between waiting to read and
// waiting to write makes: ae.c's aeCreateFileEvent and
// aeDeleteFileEvent each call epoll_ctl (redis-benchmark and wrk both
// run on it). Each is an epoll_ctl_user, priced as a socket call; on a
// kernel host the kernel model prices it as epoll_ctl(2), its entry and
// ep_insert's, ep_remove's or ep_modify's work (sim/cost.KernelSyscalls).
// The set itself needs no change, since its sockets report every kind
// of readiness.
func (es *EventSet) Control(m hw.Meter, n int64) {
	if n > 0 {
		es.in.app(m).Charge(CostEpollCtl, n)
	}
}
