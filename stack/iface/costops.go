package iface

import "github.com/savanna-sim/savanna/hw"

// The network layer's operations (range hw.OpsIface), one unit of
// protocol work each. Their keys keep the "stack_" prefix cost files and
// reports have always used.
const (
	CostFrameRx = hw.OpsIface + iota // demultiplex one received frame
	CostARP                          // process one ARP packet
	CostIPRx                         // IPv4 input of one packet
	CostIPTx                         // IPv4 output of one packet
	CostUDPRx                        // UDP input of one datagram
	CostUDPTx                        // UDP output of one datagram
)

// CostOps returns the network layer's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsIface, Ops: []hw.CostOpInfo{
		{Op: CostFrameRx, Key: "stack_eth_rx", Doc: "demultiplex one received frame"},
		{Op: CostARP, Key: "stack_arp", Doc: "process one ARP packet"},
		{Op: CostIPRx, Key: "stack_ip_rx", Doc: "IPv4 input of one packet"},
		{Op: CostIPTx, Key: "stack_ip_tx", Doc: "IPv4 output of one packet"},
		{Op: CostUDPRx, Key: "stack_udp_rx", Doc: "UDP input of one datagram"},
		{Op: CostUDPTx, Key: "stack_udp_tx", Doc: "UDP output of one datagram"},
	}}
}
