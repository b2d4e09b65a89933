package hw

import "strconv"

// CostOp names one kind of work whose cost the cost model knows: a packet
// through a driver, a byte copied, a syscall, a TCP segment received. The
// numbers live in cost-model data files (sim/cost), never in code
// (architecture invariant 4); code only says what it did.
//
// Each layer owns the names of its own operations: hw names only the
// machine's and the operating system's, which any layer may charge, and
// gives every other owner a range of ids (OpsTCP, OpsHTTP ...) in which
// it declares its own, with their file keys, in a CostOps function (see
// CostOpSet). The run's table of every op (internal/costops) is built
// from those functions; a charge stays an array index.
type CostOp uint16

// CPUMode says where the time of an operation is spent, for reports that
// split CPU into user and kernel time as top and perf do.
type CPUMode uint8

// CPU modes.
const (
	CPUUser CPUMode = iota
	CPUKernel
)

// OpsCap is the number of ids in each owner's range.
const OpsCap = 16

// The owners' ranges: an owner's ops are Base, Base+1 ... below
// Base+OpsCap. An owner is a layer of docs/architecture.md (or, for an
// op several packages of one layer charge, a small package they share).
// The order is today's report order by layer; reports do not depend on
// it (their figures are keyed by name).
const (
	// OpsMachine is hw's: NIC drivers, memory, checksums, the QAT
	// driver (this file).
	OpsMachine CostOp = iota * OpsCap
	// OpsOS is hw's: the operating system's interface any layer calls
	// (system calls, wake-ups, context switches).
	OpsOS
	// OpsKernel is the kernel model's (sim/cost): what Linux's own
	// network path and memory management cost.
	OpsKernel
	// OpsIface is the network layer's (stack/iface).
	OpsIface
	// OpsTCP is TCP's (stack/tcp).
	OpsTCP
	// OpsStack is what several protocol layers of the stack charge
	// (stack/stackcost).
	OpsStack
	// OpsLstack is the stack runtime's (stack/lstack).
	OpsLstack
	// OpsZlib is the software compression path's (zlibshim).
	OpsZlib
	// OpsApps is what several applications charge (apps/appcost).
	OpsApps
	// OpsRedis is the Redis server's (apps/redis).
	OpsRedis
	// OpsHTTP is the HTTP server's (apps/http).
	OpsHTTP

	opsEnd
)

// NumCostOps is the size of the op id space; valid ops are below it, and
// per-op arrays ([NumCostOps]T) index by op. Not every id is an op: the
// table (CostTable) says which are.
const NumCostOps = int(opsEnd)

// kernelOwners has bit i set for the owner at i*OpsCap whose ops are
// kernel time. The mode is the owner's, not each op's: a layer runs in
// one mode (the product in user space, Linux's model in the kernel), and
// a simulated core tells user from kernel time per charge without a
// table.
const kernelOwners = 1<<(OpsOS/OpsCap) | 1<<(OpsKernel/OpsCap)

// Mode returns whether the op's time is user or kernel time.
func (op CostOp) Mode() CPUMode {
	if op < opsEnd && kernelOwners>>(op/OpsCap)&1 != 0 {
		return CPUKernel
	}
	return CPUUser
}

// Base returns the first id of the op's owner range.
func (op CostOp) Base() CostOp { return op - op%OpsCap }

// String names the op by its owner range and index ("tcp+1"): hw does not
// know other owners' names; the run's CostTable does.
func (op CostOp) String() string {
	o := ownerName(op.Base())
	if o == "" {
		return "op" + strconv.Itoa(int(op))
	}
	return o + "+" + strconv.Itoa(int(op%OpsCap))
}

// ownerName names an owner range by its base, "" for none.
func ownerName(base CostOp) string {
	switch base {
	case OpsMachine:
		return "machine"
	case OpsOS:
		return "os"
	case OpsKernel:
		return "kernel"
	case OpsIface:
		return "iface"
	case OpsTCP:
		return "tcp"
	case OpsStack:
		return "stack"
	case OpsLstack:
		return "lstack"
	case OpsZlib:
		return "zlib"
	case OpsApps:
		return "apps"
	case OpsRedis:
		return "redis"
	case OpsHTTP:
		return "http"
	}
	return ""
}

// The machine's operations: what a poll-mode driver, memory, software
// checksums and the QAT user-space driver cost, whoever charges them.
const (
	// Poll-mode driver work, charged to the lcore that polls.
	CostNICRxBurst  = OpsMachine + iota // one rte_eth_rx_burst call
	CostNICRxPacket                     // one packet returned by rx burst
	CostNICTxBurst                      // one rte_eth_tx_burst call
	CostNICTxPacket                     // one packet taken by tx burst
	CostPollIdle                        // one poll-loop turn that found nothing

	// Memory.
	CostCopyByte       // one byte copied by memcpy in user space
	CostRemoteNUMAByte // extra cost of one byte read from a remote node at SLIT distance 20
	CostChecksumByte   // one byte summed by a software Internet checksum

	// Accelerator submit and completion, user-space driver side.
	CostQATSubmit   // build a request and write it to a ring
	CostQATPoll     // one poll of a response ring that found a response
	CostQATPollIdle // one poll of a response ring that found nothing
	CostUSDMAlloc   // one allocation from the USDM pool

	// CostCoreCacheBytes is not work but a size: the bytes of private
	// cache (L2) per core, unit "bytes", which the kernel path's
	// per-connection misses compare the connections' state with
	// (sim/cost.ConnCache). Never charged.
	CostCoreCacheBytes
)

// The operating system's interface: what any layer's system calls and
// scheduling cost (kernel time).
const (
	CostSyscall       = OpsOS + iota // entering and leaving the kernel once
	CostContextSwitch                // one context switch
	CostWakeup                       // waking a sleeping thread on another core (try_to_wake_up, the IPI, the idle CPU's exit)
	CostSyscallOpen                  // open(2) of a device file
	CostSyscallIoctl                 // ioctl(2) on a device file
	CostSyscallFutex                 // futex(2) wait or wake
	CostSyscallMmap                  // mmap(2) of device or pinned memory
	// CostWakeupSameCore is waking a sleeping thread that will run on
	// the waker's own core: try_to_wake_up's enqueue on the local run
	// queue, no IPI and no idle exit. A wake-up charges it or
	// CostWakeup (never both) beside the context switch, by where the
	// woken thread runs.
	CostWakeupSameCore
	// CostCacheMiss is one dependent load that misses the core's
	// private cache and is served by the shared cache or memory. It is
	// the operating system's (kernel time) because its one charger is
	// the kernel's network path, for the per-connection state its
	// segments touch (sim/cost.ConnCache).
	CostCacheMiss
	// CostKernelConnBytes is a size, unit "bytes": the per-connection
	// kernel state one segment's processing touches (struct sock and
	// tcp_sock, the epitem, the socket's queues). Never charged.
	CostKernelConnBytes
)

// MachineCostOps returns the machine's operations (OpsMachine).
func MachineCostOps() CostOpSet {
	return CostOpSet{Base: OpsMachine, Ops: []CostOpInfo{
		{CostNICRxBurst, "nic_rx_burst", "one rte_eth_rx_burst call"},
		{CostNICRxPacket, "nic_rx_packet", "one packet returned by rx burst"},
		{CostNICTxBurst, "nic_tx_burst", "one rte_eth_tx_burst call"},
		{CostNICTxPacket, "nic_tx_packet", "one packet taken by tx burst"},
		{CostPollIdle, "poll_idle", "one poll-loop turn that found nothing"},
		{CostCopyByte, "copy_byte", "one byte copied by memcpy in user space"},
		{CostRemoteNUMAByte, "remote_numa_byte", "extra cost of one byte read from a remote node at SLIT distance 20"},
		{CostChecksumByte, "checksum_byte", "one byte summed by a software Internet checksum"},
		{CostQATSubmit, "qat_submit", "build a QAT request and write it to a ring"},
		{CostQATPoll, "qat_poll", "one poll of a response ring that found a response"},
		{CostQATPollIdle, "qat_poll_idle", "one poll of a response ring that found nothing"},
		{CostUSDMAlloc, "usdm_alloc", "one allocation from the USDM pool"},
		{CostCoreCacheBytes, "core_cache_bytes", "bytes of private cache (L2) per core (a size, unit bytes; never charged)"},
	}}
}

// OSCostOps returns the operating system's operations (OpsOS).
func OSCostOps() CostOpSet {
	return CostOpSet{Base: OpsOS, Ops: []CostOpInfo{
		{CostSyscall, "syscall", "entering and leaving the kernel once"},
		{CostContextSwitch, "context_switch", "one context switch"},
		{CostWakeup, "wakeup", "waking a sleeping thread on another core, beyond the context switch (try_to_wake_up, the IPI, the idle CPU's exit)"},
		{CostSyscallOpen, "syscall_open", "open(2) of a device file"},
		{CostSyscallIoctl, "syscall_ioctl", "ioctl(2) on a device file"},
		{CostSyscallFutex, "syscall_futex", "futex(2) wait or wake"},
		{CostSyscallMmap, "syscall_mmap", "mmap(2) of device or pinned memory"},
		{CostWakeupSameCore, "wakeup_same_core", "waking a sleeping thread that runs on the waker's core, beyond the context switch (local enqueue, no IPI)"},
		{CostCacheMiss, "cache_miss", "one dependent load that misses the core's private cache (served by the shared cache or memory)"},
		{CostKernelConnBytes, "kernel_conn_bytes", "bytes of per-connection kernel state a segment's processing touches (a size, unit bytes; never charged)"},
	}}
}
