package hw

import "time"

// CostOp names one kind of work whose cost the cost model knows: a packet
// through a driver, a byte copied, a syscall, a byte compressed at a level.
// The numbers live in cost-model data files (sim/cost), never in code
// (architecture invariant 4); code only says what it did.
type CostOp uint16

// CPUMode says where the time of an operation is spent, for reports that
// split CPU into user and kernel time as top and perf do.
type CPUMode uint8

// CPU modes.
const (
	CPUUser CPUMode = iota
	CPUKernel
)

// The operations. Their names (see Name) are the keys of cost-model files;
// append new ones before numCostOps and give them a name and a mode below.
const (
	// Poll-mode driver work, charged to the lcore that polls.
	CostNICRxBurst  CostOp = iota // one rte_eth_rx_burst call
	CostNICRxPacket               // one packet returned by rx burst
	CostNICTxBurst                // one rte_eth_tx_burst call
	CostNICTxPacket               // one packet taken by tx burst
	CostPollIdle                  // one poll-loop turn that found nothing

	// Memory.
	CostCopyByte       // one byte copied by memcpy in user space
	CostRemoteNUMAByte // extra cost of one byte read from a remote node at SLIT distance 20
	CostChecksumByte   // one byte summed by a software Internet checksum

	// User-space stack (lstack), per unit of protocol work.
	CostStackEthRx      // demultiplex one received frame
	CostStackARP        // process one ARP packet
	CostStackIPRx       // IPv4 input of one packet
	CostStackIPTx       // IPv4 output of one packet
	CostStackTCPRx      // TCP input of one segment
	CostStackTCPTx      // TCP output of one segment
	CostStackUDPRx      // UDP input of one datagram
	CostStackUDPTx      // UDP output of one datagram
	CostStackTimer      // one protocol timer expiry
	CostStackSocketCall // one socket API call served by the stack thread
	CostRingOp          // one lock-free ring enqueue or dequeue
	CostEpollWaitUser   // one user-space readiness wait (lstack epoll)

	// Kernel stack and system calls.
	CostSyscall         // entering and leaving the kernel once
	CostKernelCopyByte  // one byte copied between user and kernel
	CostSoftirqPacket   // NAPI/softirq receive work for one packet
	CostKernelTCPRx     // kernel TCP input of one segment
	CostKernelTCPTx     // kernel TCP output of one segment
	CostKernelIPRx      // kernel IP input of one packet
	CostKernelIPTx      // kernel IP output of one packet
	CostInterrupt       // one hardware interrupt taken
	CostContextSwitch   // one context switch
	CostWakeup          // waking a sleeping thread (try_to_wake_up)
	CostLockContention  // one contended socket or queue lock
	CostEpollWaitKernel // one epoll_wait that returns events
	CostSyscallOpen     // open(2) of a device file
	CostSyscallIoctl    // ioctl(2) on a device file
	CostSyscallFutex    // futex(2) wait or wake
	CostSyscallMmap     // mmap(2) of device or pinned memory
	CostCompactionPage  // kernel memory compaction, per page migrated
	CostPageAlloc       // kernel page allocation, per 4 KiB page

	// Accelerator submit and completion, user-space driver side.
	CostQATSubmit   // build a request and write it to a ring
	CostQATPoll     // one poll of a response ring that found a response
	CostQATPollIdle // one poll of a response ring that found nothing
	CostUSDMAlloc   // one allocation from the USDM pool

	// Software compression, per byte of input.
	CostDeflateByteL1
	CostDeflateByteL2
	CostDeflateByteL3
	CostDeflateByteL4
	CostDeflateByteL5
	CostDeflateByteL6
	CostDeflateByteL7
	CostDeflateByteL8
	CostDeflateByteL9
	CostInflateByte // software inflate, per byte of output
	CostCRC32Byte   // software CRC32, per byte

	// Applications.
	CostAppNanos    // application work given directly in nanoseconds
	CostRESPCommand // parse and execute one RESP command
	CostHTTPRequest // parse one HTTP request and build its headers
	CostParseByte   // one byte of protocol text scanned

	numCostOps
)

// NumCostOps is the number of operations; valid ops are below it.
const NumCostOps = int(numCostOps)

// costInfo is the name and mode of each op. It is a function over a switch,
// not a table variable, so that the package holds no mutable state.
func costInfo(op CostOp) (string, CPUMode) {
	switch op {
	case CostNICRxBurst:
		return "nic_rx_burst", CPUUser
	case CostNICRxPacket:
		return "nic_rx_packet", CPUUser
	case CostNICTxBurst:
		return "nic_tx_burst", CPUUser
	case CostNICTxPacket:
		return "nic_tx_packet", CPUUser
	case CostPollIdle:
		return "poll_idle", CPUUser
	case CostCopyByte:
		return "copy_byte", CPUUser
	case CostRemoteNUMAByte:
		return "remote_numa_byte", CPUUser
	case CostChecksumByte:
		return "checksum_byte", CPUUser
	case CostStackEthRx:
		return "stack_eth_rx", CPUUser
	case CostStackARP:
		return "stack_arp", CPUUser
	case CostStackIPRx:
		return "stack_ip_rx", CPUUser
	case CostStackIPTx:
		return "stack_ip_tx", CPUUser
	case CostStackTCPRx:
		return "stack_tcp_rx", CPUUser
	case CostStackTCPTx:
		return "stack_tcp_tx", CPUUser
	case CostStackUDPRx:
		return "stack_udp_rx", CPUUser
	case CostStackUDPTx:
		return "stack_udp_tx", CPUUser
	case CostStackTimer:
		return "stack_timer", CPUUser
	case CostStackSocketCall:
		return "stack_socket_call", CPUUser
	case CostRingOp:
		return "ring_op", CPUUser
	case CostEpollWaitUser:
		return "epoll_wait_user", CPUUser
	case CostSyscall:
		return "syscall", CPUKernel
	case CostKernelCopyByte:
		return "kernel_copy_byte", CPUKernel
	case CostSoftirqPacket:
		return "softirq_packet", CPUKernel
	case CostKernelTCPRx:
		return "kernel_tcp_rx", CPUKernel
	case CostKernelTCPTx:
		return "kernel_tcp_tx", CPUKernel
	case CostKernelIPRx:
		return "kernel_ip_rx", CPUKernel
	case CostKernelIPTx:
		return "kernel_ip_tx", CPUKernel
	case CostInterrupt:
		return "interrupt", CPUKernel
	case CostContextSwitch:
		return "context_switch", CPUKernel
	case CostWakeup:
		return "wakeup", CPUKernel
	case CostLockContention:
		return "lock_contention", CPUKernel
	case CostEpollWaitKernel:
		return "epoll_wait_kernel", CPUKernel
	case CostSyscallOpen:
		return "syscall_open", CPUKernel
	case CostSyscallIoctl:
		return "syscall_ioctl", CPUKernel
	case CostSyscallFutex:
		return "syscall_futex", CPUKernel
	case CostSyscallMmap:
		return "syscall_mmap", CPUKernel
	case CostCompactionPage:
		return "compaction_page", CPUKernel
	case CostPageAlloc:
		return "page_alloc", CPUKernel
	case CostQATSubmit:
		return "qat_submit", CPUUser
	case CostQATPoll:
		return "qat_poll", CPUUser
	case CostQATPollIdle:
		return "qat_poll_idle", CPUUser
	case CostUSDMAlloc:
		return "usdm_alloc", CPUUser
	case CostDeflateByteL1, CostDeflateByteL2, CostDeflateByteL3,
		CostDeflateByteL4, CostDeflateByteL5, CostDeflateByteL6,
		CostDeflateByteL7, CostDeflateByteL8, CostDeflateByteL9:
		return "deflate_byte_l" + string(rune('1'+op-CostDeflateByteL1)), CPUUser
	case CostInflateByte:
		return "inflate_byte", CPUUser
	case CostCRC32Byte:
		return "crc32_byte", CPUUser
	case CostAppNanos:
		return "app_nanos", CPUUser
	case CostRESPCommand:
		return "resp_command", CPUUser
	case CostHTTPRequest:
		return "http_request", CPUUser
	case CostParseByte:
		return "parse_byte", CPUUser
	}
	return "", CPUUser
}

// Name returns the op's key in cost-model files, or "" for an invalid op.
func (op CostOp) Name() string { n, _ := costInfo(op); return n }

// Mode returns whether the op's time is user or kernel time.
func (op CostOp) Mode() CPUMode { _, m := costInfo(op); return m }

// String implements fmt.Stringer.
func (op CostOp) String() string { return op.Name() }

// DeflateByteOp returns the software-deflate op for a zlib level (1..9;
// out-of-range levels are clamped).
func DeflateByteOp(level int) CostOp {
	level = max(1, min(9, level))
	return CostDeflateByteL1 + CostOp(level-1)
}

// CostOpByName finds an op by its file key.
func CostOpByName(name string) (CostOp, bool) {
	for op := CostOp(0); op < numCostOps; op++ {
		if op.Name() == name {
			return op, true
		}
	}
	return 0, false
}

// Meter is how code above the contracts accounts for its work. In virtual
// time, a simulated core implements it: Charge makes the core busy for the
// cost-model price of the work and Now includes what has been charged so
// far. In real time it only counts, and Now is the wall clock since the run
// started.
type Meter interface {
	// Now is the caller's current time since the start of the run.
	Now() time.Duration
	// Charge accounts count units of op to the caller.
	Charge(op CostOp, count int64)
	// Idle lets d pass without work: a thread that blocks rather than
	// spins (futex wait, epoll wait).
	Idle(d time.Duration)
}

// CountingMeter is a Meter that only counts, with a clock the owner sets.
// Tests of sans-I/O code and the real-time driver use it.
type CountingMeter struct {
	Clock  time.Duration
	Counts [NumCostOps]int64
	Idled  time.Duration
}

// Now returns Clock.
func (m *CountingMeter) Now() time.Duration { return m.Clock }

// Charge adds count to the op's counter.
func (m *CountingMeter) Charge(op CostOp, count int64) {
	if int(op) < NumCostOps {
		m.Counts[op] += count
	}
}

// Idle advances Clock by d and records it.
func (m *CountingMeter) Idle(d time.Duration) { m.Clock += d; m.Idled += d }

// WallMeter is a Meter on the wall clock for code outside a poll-mode
// runtime, such as a worker process's shim talking to the QAT device
// process: Now is the monotonic time since the meter was made, Charge
// only counts, and Idle records the time without sleeping (real time
// passes by itself; the caller polls again). Like CountingMeter it is for
// one goroutine; stack/rt's Meter is the one lcores share with readers.
type WallMeter struct {
	start  time.Time
	Counts [NumCostOps]int64
	Idled  time.Duration
}

// NewWallMeter returns a WallMeter whose clock starts now.
func NewWallMeter() *WallMeter { return &WallMeter{start: time.Now()} }

// Now returns the time since NewWallMeter.
func (m *WallMeter) Now() time.Duration { return time.Since(m.start) }

// Charge adds count to the op's counter.
func (m *WallMeter) Charge(op CostOp, count int64) {
	if int(op) < NumCostOps {
		m.Counts[op] += count
	}
}

// Idle records d.
func (m *WallMeter) Idle(d time.Duration) { m.Idled += d }

// NoDeadline is the deadline of work that has nothing scheduled: a poller
// that returns it runs again only when something wakes it.
const NoDeadline = time.Duration(1<<63 - 1)
