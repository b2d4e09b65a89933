// Package ringdev is an in-memory pair of ethdev ports, the Go form of
// DPDK's net_ring poll-mode driver (drivers/net/ring, rte_eth_from_rings):
// what one port transmits is received by the other, mbuf pointers passed
// through lock-free single-producer/single-consumer rings without a copy.
//
// Unlike the sim/nic model it runs in real time and is safe for use from
// several goroutines at once, one per queue as DPDK allows: every
// (tx queue of one port, rx queue of the other) pair has its own SPSC ring,
// so no lock is ever taken on the packet path. With several rx queues and
// RSS enabled, the receiving port spreads TCP/IPv4 flows with the Toeplitz
// hash and a redirection table as a NIC does (Microsoft's "RSS hashing"
// specification; DPDK rte_eth_dev_rss_reta_update). A full rx ring drops the
// frame and counts it in the receiver's imissed, as a NIC does.
//
// net_ring offers no offloads, and neither does a port by default. With
// Config.ChecksumOffload a port offers IPv4/TCP/UDP checksum offload the
// way Linux's loopback does: a checksum the sender leaves to the link is
// never computed and the frame arrives marked good (an in-memory link
// cannot corrupt it); frames summed in software arrive unmarked.
//
// NewMempool gives a thread-safe, allocation-free hw.Mempool (a lock-free
// last-in first-out stack of mbufs, so that the mbuf freed last, still in
// the cache, is reused first, as with DPDK's per-lcore mempool caches) for
// the real-time driver and live mode.
//
// simrun serve (live mode) uses only the mempool. The port pair is the
// device of the real-time specs (stack/rt, stack/gonet, hw/ringdev's
// hwtest conformance run) and of bench/netw, all outside the commands'
// call graph: that is why deadcode, run without tests, lists every Port
// method, and why .ci/deadcode does not look at hw implementations.
package ringdev
