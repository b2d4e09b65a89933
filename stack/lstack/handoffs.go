package lstack

import (
	"time"

	"github.com/savanna-sim/savanna/stack/sockring"
)

// Handoffs makes the hand-offs of a bridge's sockets (SetHandoffs): how
// what one side writes reaches the other. In virtual time the binding
// delivers each at its producer's clock (internal/simhost); the bridge
// only asks it to catch its stack thread up to the thread's clock, once
// a poll, and keeps a list of the sockets whose requests a delivery may
// have made ready, so that a poll looks at those and not at every
// socket with a request on its way.
type Handoffs interface {
	// ToApp makes the hand-off of a socket's receive ring, whose
	// consumer is the application thread; wake is its doorbell, rung
	// when the hand-off delivers.
	ToApp(wake func(at time.Duration)) sockring.Handoff
	// ToStack makes the hand-off of a socket's send ring or calls,
	// whose consumer is the stack thread; wake is the thread's doorbell,
	// rung when the producer's side delivers. arrived is called on every
	// delivery that makes bytes or calls visible to the stack thread,
	// whether the producer's side made it or the thread's catch-up
	// (CatchUp, sockring.Ring.Sync).
	ToStack(wake func(at time.Duration), arrived func()) StackHandoff
	// CatchUp makes visible every ToStack hand-off due by now, the stack
	// thread's clock, as sockring.Ring.Sync(now) on each of their rings
	// would.
	CatchUp(now time.Duration)
}

// StackHandoff is a hand-off whose consumer is the stack thread.
type StackHandoff interface {
	sockring.Handoff
	// Leave takes the hand-off out of Handoffs.CatchUp's: the stack
	// thread is done with its socket, and what is still on its way is
	// delivered by the producer's side alone.
	Leave()
}
