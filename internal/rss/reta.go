package rss

// DefaultRETA fills reta round-robin over queues, as drivers do at
// configure time (entry i goes to queue i % queues; DPDK's testpmd and
// the ixgbe/i40e drivers' defaults).
func DefaultRETA(reta []uint16, queues int) {
	if queues <= 0 {
		queues = 1
	}
	for i := range reta {
		reta[i] = uint16(i % queues)
	}
}

// RETAQueue returns the queue a hash maps to through reta:
// reta[hash % len(reta)], as the NIC indexes its redirection table by the
// low bits of the hash (RETA sizes are powers of two, so the modulo is
// those bits). An empty table maps everything to queue 0.
func RETAQueue(reta []uint16, hash uint32) uint16 {
	if len(reta) == 0 {
		return 0
	}
	return reta[hash%uint32(len(reta))]
}
