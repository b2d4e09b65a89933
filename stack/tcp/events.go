package tcp

// EventMask is a set of readiness conditions, for an epoll-like layer
// above the engine.
type EventMask uint8

// Readiness conditions.
const (
	// EventReadable: data, end of stream or an error can be read.
	EventReadable EventMask = 1 << iota
	// EventWritable: the send buffer has room (also signals a completed
	// active open).
	EventWritable
	// EventError: the connection failed (reset, refused, timed out).
	EventError
	// EventHangup: the peer closed its side (FIN received) or the
	// connection is gone.
	EventHangup
	// EventAcceptable: a listener has a connection to Accept.
	EventAcceptable
)

// Event is one entry of a ready list: a connection or a listener and the
// conditions that became true since it was last drained.
type Event struct {
	Conn     *Conn
	Listener *Listener
	Mask     EventMask
	// Data is what the socket was added to its EventSet with (nil on the
	// stack's ready list).
	Data any
}

// Events appends the pending readiness events of the sockets in no
// EventSet to dst and empties the stack's ready list. Each connection or
// listener appears at most once, with the union of its conditions, in
// the order they first became ready.
func (s *Stack) Events(dst []Event) []Event {
	s.ready, dst = drain(s.ready, dst)
	return dst
}

// drain appends a ready list's entries to dst with the conditions now
// pending on each (dropping those with none left), clears each socket's
// pending conditions and queued mark, and returns the emptied list.
func drain(ready, dst []Event) ([]Event, []Event) {
	for i := range ready {
		e := ready[i]
		if e.Conn != nil {
			e.Mask = e.Conn.evPending
			e.Conn.evPending = 0
			e.Conn.evQueued = false
		} else {
			e.Mask = e.Listener.evPending
			e.Listener.evPending = 0
			e.Listener.evQueued = false
		}
		if e.Mask != 0 {
			dst = append(dst, e)
		}
		ready[i] = Event{}
	}
	return ready[:0], dst
}

// notify records readiness conditions of c for its ready list (its
// EventSet's, or the stack's) and calls the connection's hook. One not
// yet accepted from a listener in a set only records them: EventSet.Add
// reports them.
func (c *Conn) notify(m EventMask) {
	if hook := c.hook(); hook != nil {
		hook(c, m)
	}
	c.evPending |= m
	if c.evQueued {
		return
	}
	switch {
	case c.set != nil:
		c.evQueued = true
		c.set.ready = append(c.set.ready, Event{Conn: c, Data: c.setData})
	case c.listener != nil && c.listener.set != nil:
	default:
		c.evQueued = true
		c.s.ready = append(c.s.ready, Event{Conn: c})
	}
}

// notify records readiness conditions of l, for the stack's ready list
// or, when l is in an EventSet, for the set to collect.
func (l *Listener) notify(m EventMask) {
	l.evPending |= m
	if !l.evQueued && l.set == nil {
		l.evQueued = true
		l.s.ready = append(l.s.ready, Event{Listener: l})
	}
}
