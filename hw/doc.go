// Package hw holds Savanna's hardware contracts: the small, DPDK-shaped
// interfaces that sit between the real product code (stack/, zlibshim/,
// apps/) and whatever implements the hardware underneath.
//
// Two families of implementations exist:
//
//   - sim/... models (the default): a NIC, QAT devices and a NUMA machine
//     running in virtual time;
//   - hw/dpdk (build tag dpdk): cgo over real DPDK 22.11 (ethdev,
//     mempool, compressdev, EAL hugepage memory).
//
// Only the wiring (rig/, cmd/) chooses an implementation. Code above this
// package never learns which one it runs on (architecture invariant 1).
//
// Each contract names the DPDK call it mirrors, so that a reader who knows
// DPDK can map one onto the other. Where Go idiom and DPDK differ (errors
// rather than negative return codes, slices rather than pointer+count), the
// DPDK semantics are kept and the Go shape is used.
package hw
