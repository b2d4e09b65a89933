package cost

import (
	"github.com/savanna-sim/savanna/hw"
)

// The kernel model's operations (range hw.OpsKernel, kernel time): what
// Linux's own network path and memory management cost. Only models
// charge them: KernelPath and KernelSyscalls for a kernel-stack host,
// sim/qat for the legacy driver's contiguous allocations.
const (
	KernelCopyByte  = hw.OpsKernel + iota // one byte copied between user and kernel
	SoftirqPacket                         // NAPI/softirq receive work for one packet
	KernelTCPRx                           // kernel TCP input of one segment
	KernelTCPTx                           // kernel TCP output of one segment
	KernelIPRx                            // kernel IP input of one packet
	KernelIPTx                            // kernel IP output of one packet
	Interrupt                             // one hardware interrupt taken
	LockContention                        // one contended socket or queue lock
	EpollWaitKernel                       // one epoll_wait that returns events, per call
	CompactionPage                        // kernel memory compaction, per page migrated
	PageAlloc                             // kernel page allocation, per 4 KiB page
	EpollWaitEvent                        // one ready event epoll_wait returns (ep_send_events)
	EpollCtlKernel                        // one epoll_ctl's work beyond the system call's entry
)

// CostOps returns the kernel model's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsKernel, Ops: []hw.CostOpInfo{
		{Op: KernelCopyByte, Key: "kernel_copy_byte", Doc: "one byte copied between user and kernel"},
		{Op: SoftirqPacket, Key: "softirq_packet", Doc: "NAPI/softirq receive work for one packet"},
		{Op: KernelTCPRx, Key: "kernel_tcp_rx", Doc: "kernel TCP input of one segment"},
		{Op: KernelTCPTx, Key: "kernel_tcp_tx", Doc: "kernel TCP output of one segment"},
		{Op: KernelIPRx, Key: "kernel_ip_rx", Doc: "kernel IP input of one packet"},
		{Op: KernelIPTx, Key: "kernel_ip_tx", Doc: "kernel IP output of one packet"},
		{Op: Interrupt, Key: "interrupt", Doc: "one hardware interrupt taken"},
		{Op: LockContention, Key: "lock_contention", Doc: "one contended socket or queue lock"},
		{Op: EpollWaitKernel, Key: "epoll_wait_kernel", Doc: "one epoll_wait that returns events, per call"},
		{Op: CompactionPage, Key: "compaction_page", Doc: "kernel memory compaction, per page migrated"},
		{Op: PageAlloc, Key: "page_alloc", Doc: "kernel page allocation, per 4 KiB page"},
		{Op: EpollWaitEvent, Key: "epoll_wait_event", Doc: "one ready event epoll_wait returns (ep_send_events)"},
		{Op: EpollCtlKernel, Key: "epoll_ctl_kernel", Doc: "one epoll_ctl's work beyond the system call's entry (ep_insert, ep_remove or ep_modify)"},
	}}
}

// ProductOps are the product's operations the kernel model prices as
// Linux's work (KernelPath, KernelSyscalls). A model does not import the
// product (docs/architecture.md), so it is handed their ids by the rig (internal/costops.KernelModelOps), once, when a
// decorator is built; a charge then compares ids as before.
type ProductOps struct {
	FrameRx, IPRx, IPTx hw.CostOp // stack_eth_rx, stack_ip_rx, stack_ip_tx
	TCPRx, TCPTx        hw.CostOp // stack_tcp_rx, stack_tcp_tx
	SocketCall, RingOp  hw.CostOp // stack_socket_call, ring_op
	EpollWaitUser       hw.CostOp // epoll_wait_user
	EpollEventUser      hw.CostOp // epoll_event_user
	// EpollCtl is the product's change to an event loop's interest list
	// (epoll_ctl_user), which KernelSyscalls prices as a system call and
	// epoll_ctl_kernel. HasEpollCtl says it is set: op 0 is a machine
	// operation (nic_rx_burst), so a zero EpollCtl cannot mean "none".
	EpollCtl    hw.CostOp
	HasEpollCtl bool
}
