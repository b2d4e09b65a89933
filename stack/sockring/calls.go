package sockring

import "time"

// Calls are the requests one producer posts to one consumer that carry
// no bytes of their own (Gazelle's rpc messages from an application
// thread to its stack thread: send, close, "the receive ring has room"),
// handed off like a ring's bytes, so that a consumer on another
// simulated core sees a call no earlier than its producer made it. It is
// a Ring without storage whose tail counts calls.
type Calls struct{ r Ring }

// NewCalls returns an empty call count whose posts hand reaches the
// consumer (nil: at once).
func NewCalls(hand Handoff) *Calls {
	c := &Calls{}
	c.r.setHandoff(hand)
	return c
}

// Post posts one call at the producer's clock at (producer side).
func (c *Calls) Post(at time.Duration) {
	c.r.Commit(1)
	c.r.Flush(at)
}

// Arrived returns the calls handed off and not yet taken (consumer
// side).
func (c *Calls) Arrived() int { return c.r.Len() }

// InFlight returns the calls posted but not yet handed off.
func (c *Calls) InFlight() int { return c.r.InFlight() }

// Sync lets the consumer, at its clock now, see the calls due by then
// (Ring.Sync).
func (c *Calls) Sync(now time.Duration) { c.r.Sync(now) }

// Take takes every call that arrived and returns their count (consumer
// side).
func (c *Calls) Take() int {
	n := c.r.Len()
	c.r.Consume(n)
	return n
}
