// Package stackcost names the cost operations that several protocol
// layers of the stack charge and that none of them can own, because they
// do not import each other: TCP's timers (stack/tcp) and IPv4
// reassembly's (stack/iface) both expire as "a protocol timer". Each
// layer's own operations are its own (tcp.CostOps, iface.CostOps).
package stackcost

import "github.com/savanna-sim/savanna/hw"

// The stack's shared operations (range hw.OpsStack).
const (
	Timer = hw.OpsStack + iota // one protocol timer expiry
)

// CostOps returns the stack's shared operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsStack, Ops: []hw.CostOpInfo{
		{Op: Timer, Key: "stack_timer", Doc: "one protocol timer expiry"},
	}}
}
