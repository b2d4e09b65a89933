package tcp

import "github.com/savanna-sim/savanna/hw"

// TCP's operations (range hw.OpsTCP). A timer's expiry is
// stack/stackcost's: the network layer's reassembly timer charges it too.
const (
	CostSegmentRx = hw.OpsTCP + iota // TCP input of one segment
	CostSegmentTx                    // TCP output of one segment
)

// CostOps returns TCP's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsTCP, Ops: []hw.CostOpInfo{
		{Op: CostSegmentRx, Key: "stack_tcp_rx", Doc: "TCP input of one segment"},
		{Op: CostSegmentTx, Key: "stack_tcp_tx", Doc: "TCP output of one segment"},
	}}
}
