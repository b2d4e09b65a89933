package lstack

import "github.com/savanna-sim/savanna/hw"

// The stack runtime's operations (range hw.OpsLstack): serving the
// applications' socket calls over its rings.
const (
	CostSocketCall = hw.OpsLstack + iota // one socket API call served by the stack thread
	CostRingOp                           // one lock-free ring enqueue or dequeue
	CostEpollWait                        // one user-space readiness wait (lstack epoll)
	CostEpollEvent                       // one ready event a readiness wait returns
	CostEpollCtl                         // one change to an event loop's interest list (epoll_ctl)
)

// CostOps returns the stack runtime's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsLstack, Ops: []hw.CostOpInfo{
		{Op: CostSocketCall, Key: "stack_socket_call", Doc: "one socket API call served by the stack thread"},
		{Op: CostRingOp, Key: "ring_op", Doc: "one lock-free ring enqueue or dequeue"},
		{Op: CostEpollWait, Key: "epoll_wait_user", Doc: "one user-space readiness wait (lstack epoll)"},
		{Op: CostEpollEvent, Key: "epoll_event_user", Doc: "one ready event a readiness wait returns"},
		{Op: CostEpollCtl, Key: "epoll_ctl_user", Doc: "one change to an event loop's interest list (epoll_ctl), served as a socket call"},
	}}
}
