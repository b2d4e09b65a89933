// Package numa models the machine a simulated program runs on: sockets,
// NUMA nodes, logical CPUs with their cores and SMT siblings, the clock
// rate, memory per node and the ACPI SLIT distance matrix (Topology); the
// hugepage pools reserved per node, from which DPDK-style code takes its
// memory (Memory, which implements hw.HugeMemory); and the extra cost of
// touching memory on another node (AccessFactor, RemoteBytes).
//
// Topologies come from presets for the seed articles' machines (Preset),
// from the running host's sysfs (ReadHost), or from an inline Spec in a
// scenario file. Topology is plain data, safe for concurrent reads; Memory
// is single-threaded like the virtual-time engine that drives it.
//
// docs/numa.md gives every preset figure with its source.
package numa
