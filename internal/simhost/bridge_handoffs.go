package simhost

import (
	"time"

	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/sockring"
)

// BridgeHandoffs are an lstack bridge's hand-offs in virtual time: each
// socket's receive ring is a Handoff of its own, which its application
// thread catches up when it reads; the send rings and calls, whose
// consumer is the stack thread, are a Consumer's, which the thread
// catches up once a poll.
type BridgeHandoffs struct {
	eng   *sim.Engine
	stack *Consumer
}

// NewBridgeHandoffs returns the hand-offs of one bridge on eng.
func NewBridgeHandoffs(eng *sim.Engine) *BridgeHandoffs {
	return &BridgeHandoffs{eng: eng, stack: NewConsumer(eng)}
}

// ToApp implements lstack.Handoffs.
func (b *BridgeHandoffs) ToApp(wake func(at time.Duration)) sockring.Handoff {
	return NewHandoff(b.eng, wake)
}

// ToStack implements lstack.Handoffs.
func (b *BridgeHandoffs) ToStack(wake func(at time.Duration), arrived func()) lstack.StackHandoff {
	return b.stack.NewHandoff(wake, arrived)
}

// CatchUp implements lstack.Handoffs.
func (b *BridgeHandoffs) CatchUp(now time.Duration) { b.stack.CatchUp(now) }
