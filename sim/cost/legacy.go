package cost

import "github.com/savanna-sim/savanna/hw"

// legacyTable is the run's table under the names hw kept for the
// operations that moved to their owners (hw/cost_deprecated.go), for the
// deprecated Default, Load and Parse while their callers move to For.
// internal/costops checks that it is the run's table, op for op and key
// for key. It goes with the deprecated names.
func legacyTable() *hw.CostTable {
	set := func(base hw.CostOp, ops ...hw.CostOpInfo) hw.CostOpSet { return hw.CostOpSet{Base: base, Ops: ops} }
	op := func(op hw.CostOp, key string) hw.CostOpInfo {
		return hw.CostOpInfo{Op: op, Key: key, Doc: "(the name hw kept)"}
	}
	t, err := hw.NewCostTable(hw.MachineCostOps(), hw.OSCostOps(), CostOps(),
		set(hw.OpsIface, op(hw.CostStackEthRx, "stack_eth_rx"), op(hw.CostStackARP, "stack_arp"),
			op(hw.CostStackIPRx, "stack_ip_rx"), op(hw.CostStackIPTx, "stack_ip_tx"),
			op(hw.CostStackUDPRx, "stack_udp_rx"), op(hw.CostStackUDPTx, "stack_udp_tx")),
		set(hw.OpsTCP, op(hw.CostStackTCPRx, "stack_tcp_rx"), op(hw.CostStackTCPTx, "stack_tcp_tx")),
		set(hw.OpsStack, op(hw.CostStackTimer, "stack_timer")),
		set(hw.OpsLstack, op(hw.CostStackSocketCall, "stack_socket_call"), op(hw.CostRingOp, "ring_op"),
			op(hw.CostEpollWaitUser, "epoll_wait_user")),
		set(hw.OpsZlib, op(hw.CostDeflateByteL1, "deflate_byte_l1"), op(hw.CostDeflateByteL2, "deflate_byte_l2"),
			op(hw.CostDeflateByteL3, "deflate_byte_l3"), op(hw.CostDeflateByteL4, "deflate_byte_l4"),
			op(hw.CostDeflateByteL5, "deflate_byte_l5"), op(hw.CostDeflateByteL6, "deflate_byte_l6"),
			op(hw.CostDeflateByteL7, "deflate_byte_l7"), op(hw.CostDeflateByteL8, "deflate_byte_l8"),
			op(hw.CostDeflateByteL9, "deflate_byte_l9"), op(hw.CostInflateByte, "inflate_byte"),
			op(hw.CostCRC32Byte, "crc32_byte")),
		set(hw.OpsApps, op(hw.CostAppNanos, "app_nanos"), op(hw.CostParseByte, "parse_byte")),
		set(hw.OpsRedis, op(hw.CostRESPCommand, "resp_command")),
		set(hw.OpsHTTP, op(hw.CostHTTPRequest, "http_request")),
	)
	if err != nil {
		panic("cost: the deprecated names' table: " + err.Error())
	}
	return t
}

// LegacyTable returns the table the deprecated Default, Load and Parse
// read against, for internal/costops's check that it equals the run's.
//
// Deprecated: use costops.Table().
func LegacyTable() *hw.CostTable { return legacyTable() }
