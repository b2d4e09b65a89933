package tcp

import "slices"

// EventSet is one application's ready list (its epoll instance, as
// Gazelle gives every application its own): the listeners and
// connections added to it report their readiness here instead of on the
// stack's ready list, so several applications on one stack each drain
// only their own sockets' events. The zero value is an empty set.
//
// Readiness is edge-triggered, as on the stack's list: each socket
// appears at most once per drain with the union of the conditions that
// became true since the last one.
//
// A socket in a set points at it, so a notification costs an append to
// the set's list: no lookup and, once the list has grown, no allocation.
type EventSet struct {
	ready     []Event
	listeners []*Listener
}

// Add makes c report its readiness to the set, with data in every Event
// (epoll_data): the application finds its state for the connection
// without a lookup. Conditions already pending (bytes that came with the
// handshake's last ACK, before Accept) are reported at the next drain, as
// epoll_ctl(EPOLL_CTL_ADD) reports a socket that is already ready. A
// connection belongs to one set at a time.
func (es *EventSet) Add(c *Conn, data any) {
	if c.evQueued {
		if c.set == nil {
			c.s.unqueueConn(c)
		} else {
			c.set.unqueueConn(c)
		}
		c.evQueued = false
	}
	c.set, c.setData = es, data
	if c.evPending != 0 {
		c.evQueued = true
		es.ready = append(es.ready, Event{Conn: c, Data: data})
	}
}

// AddListener makes l report its readiness (EventAcceptable) to the set,
// with data in its events. A listener in a set never goes on the stack's
// ready list: the set looks at its few listeners on every drain. The
// connections accepted from it wait, with their conditions, until they
// are added to a set (Accept then Add, as accept(2) then epoll_ctl).
func (es *EventSet) AddListener(l *Listener, data any) {
	if l.evQueued {
		l.s.unqueueListener(l)
		l.evQueued = false
	}
	l.set, l.setData = es, data
	es.listeners = append(es.listeners, l)
}

// Events appends the set's pending readiness events to dst and empties
// its ready list: first its listeners that have connections to accept,
// then its connections in the order they first became ready.
func (es *EventSet) Events(dst []Event) []Event {
	for _, l := range es.listeners {
		if m := l.evPending; m != 0 {
			l.evPending = 0
			dst = append(dst, Event{Listener: l, Mask: m, Data: l.setData})
		}
	}
	es.ready, dst = drain(es.ready, dst)
	return dst
}

// unqueueConn takes c off the stack's ready list, where it went before
// it joined a set. The list holds only sockets in no set, so it is short
// when applications use sets.
func (s *Stack) unqueueConn(c *Conn) { s.ready = unqueue(s.ready, c) }

// unqueueConn takes c off the set's ready list, as it moves to another.
func (es *EventSet) unqueueConn(c *Conn) { es.ready = unqueue(es.ready, c) }

func unqueue(ready []Event, c *Conn) []Event {
	if i := slices.IndexFunc(ready, func(e Event) bool { return e.Conn == c }); i >= 0 {
		return slices.Delete(ready, i, i+1)
	}
	return ready
}

// unqueueListener is unqueueConn for a listener.
func (s *Stack) unqueueListener(l *Listener) {
	if i := slices.IndexFunc(s.ready, func(e Event) bool { return e.Listener == l }); i >= 0 {
		s.ready = slices.Delete(s.ready, i, i+1)
	}
}
