// Package nic is Savanna's model of a DPDK-driven NIC: ports that
// implement hw.EthDev (rx and tx queues with descriptor rings of a set
// size, mbuf mempools on the port's NUMA node, RSS with the Toeplitz hash
// and a redirection table, checksum offloads, rte_eth_stats and xstats),
// point-to-point links and a learning switch that carry frames between
// ports in virtual time at the link's speed with seeded impairments, and
// pcapng capture of any port.
//
// Frames are modelled as DPDK presents them with CRC stripping: an mbuf
// holds a frame without its 4-byte FCS, and ibytes/obytes count those
// bytes. On the wire a frame occupies max(len+4, 64) bytes plus 8 bytes of
// preamble and start-of-frame delimiter and 12 bytes of inter-frame gap
// (IEEE 802.3 clause 4.4.2). docs/nic.md has the arithmetic, the presets
// and their sources, the impairment semantics and the statistics.
//
// Everything runs on the sim.Engine's single thread: no goroutines, no
// wall clock, randomness only from the engine's per-model streams.
package nic
