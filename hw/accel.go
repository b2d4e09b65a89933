package hw

import "errors"

// Errors a CompressService returns, wrapped with context. Callers classify
// them with errors.Is to count fallbacks by reason.
var (
	// ErrNoInstance: every instance of the device section is held.
	ErrNoInstance = errors.New("no free compression instance")
	// ErrNoPinnedMemory: the pinned (USDM) memory limit or pool is spent.
	ErrNoPinnedMemory = errors.New("pinned memory exhausted")
	// ErrDeviceDown: the device is resetting or failed its heartbeat.
	ErrDeviceDown = errors.New("compression device unavailable")
)

// ProcessID identifies a process that holds accelerator resources, as a
// Tengine worker does. Instances and pinned memory are accounted to it.
type ProcessID int

// PinnedBuffer is physically contiguous, pinned memory that a device can
// DMA from and to: USDM's qaeMemAllocNUMA on QAT, an rte_malloc'd IOVA
// contiguous buffer on DPDK.
type PinnedBuffer struct {
	// Bytes is the buffer.
	Bytes []byte
	// Node is the NUMA node it lives on.
	Node int
	// IOVA is its device-visible address.
	IOVA uint64
	// Owner is the process it is accounted to.
	Owner ProcessID
	// Handle is private to the allocator.
	Handle uintptr
}

// CompressInstance is one compression instance held by a process: on QAT
// a DC instance (cpaDcGetInstances, then cpaDcStartInstance), which under
// DPDK is one queue pair of a compressdev.
type CompressInstance interface {
	// Device is the device the instance's queue pair belongs to.
	Device() CompressDev
	// QueuePair is the instance's queue pair on Device.
	QueuePair() int
	// NUMANode is the node of the device.
	NUMANode() int
	// Name identifies the instance in statistics ("dev0/inst12").
	Name() string
}

// CompressService is an accelerator driver as one host's processes see
// it: it hands out instances and pinned memory and takes them back. On
// QAT this is the user-space driver with its USDM module; under DPDK, the
// compressdevs the EAL probed with rte_malloc for pinned memory.
type CompressService interface {
	// Attach gives process pid an instance, preferring one on node (or any
	// node when node is negative). It returns an error wrapping
	// ErrNoInstance or ErrDeviceDown when none can be had.
	Attach(pid ProcessID, node int) (CompressInstance, error)
	// Detach returns an instance.
	Detach(pid ProcessID, inst CompressInstance) error
	// AllocPinned gives process pid a pinned buffer of size bytes on node,
	// or an error wrapping ErrNoPinnedMemory.
	AllocPinned(pid ProcessID, size int, node int) (*PinnedBuffer, error)
	// FreePinned returns a pinned buffer.
	FreePinned(buf *PinnedBuffer) error
	// Exit ends process pid: what it still holds is taken back and
	// counted as leaked.
	Exit(pid ProcessID)
}
