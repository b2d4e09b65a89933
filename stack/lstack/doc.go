// Package lstack is Savanna's per-core stack runtime in the shape of
// openEuler Gazelle's lstack: one stack Instance per lcore, each owning one
// rx/tx queue pair of a port (RSS spreads flows over them), polling it in
// bursts, running the network layer (stack/iface) and TCP (stack/tcp), and
// batching what it sends into tx bursts.
//
// An Instance is a poller: its Poll method does one turn of the lcore's
// loop and reports the next deadline. In virtual time a simulated core
// calls it (sim.Core); in real time an lcore goroutine does. It does no
// I/O of its own beyond the hw.EthDev it was given, reads no clock and
// starts no goroutines (architecture invariant 2).
package lstack
