package qat

import "fmt"

// Driver is a generation of the QAT driver and its zlib shim, the three
// stages of the seed's story. It decides how pinned memory is obtained and
// which syscalls each request makes.
type Driver string

// Driver generations.
const (
	// DriverLegacy is Intel-QAT 2.6.0-60 (QAT 1.6): no USDM, so every
	// pinned buffer is physically contiguous memory asked from the kernel
	// with an ioctl, which compacts memory as it fragments. The seed: ~1k
	// QPS saturated the CPU, >90% in the kernel, compact_zone 88% of
	// samples.
	DriverLegacy Driver = "qat1.6-legacy"
	// DriverOOT31092 is intel-qatOOT31092: USDM hugepage pool, but its
	// zlib shim opened and ioctl'd the device twice per request ("open
	// and ioctl came in pairs, 4 of them per HTTP request").
	DriverOOT31092 Driver = "oot31092"
	// DriverOOT40052 is intel-qatOOT40052: USDM pool and no per-request
	// syscalls; 256 instances per device section.
	DriverOOT40052 Driver = "oot40052"
)

// Drivers lists the generations, oldest first.
func Drivers() []Driver { return []Driver{DriverLegacy, DriverOOT31092, DriverOOT40052} }

// SyscallPattern is what a driver generation's user-space part asks the
// kernel for.
type SyscallPattern struct {
	// PerStream are the syscalls of one request (one compression or
	// decompression stream: the ops from a stream's first to the one with
	// FlushFinal), charged when its first op is enqueued.
	PerStreamOpen, PerStreamIoctl int
	// Attach are the syscalls of taking an instance: opening the device
	// file, the ioctl that reserves the ring bank, and mapping the rings.
	AttachOpen, AttachIoctl, AttachMmap int
	// ContiguousFromKernel says pinned buffers are kernel contiguous
	// allocations (one ioctl each to allocate and to free) rather than
	// carved from the USDM hugepage pool.
	ContiguousFromKernel bool
	// DefaultInstances is the size of a device section when the
	// configuration does not say: 64 for the older drivers, 256 for the
	// newer (the seed's reload fix).
	DefaultInstances int
}

// Pattern returns the syscall pattern of the driver generation.
func (d Driver) Pattern() SyscallPattern {
	p := SyscallPattern{AttachOpen: 1, AttachIoctl: 1, AttachMmap: 1, DefaultInstances: 64}
	switch d {
	case DriverLegacy:
		p.ContiguousFromKernel = true
	case DriverOOT31092:
		// The seed: open and ioctl came in pairs, 4 per HTTP request.
		p.PerStreamOpen, p.PerStreamIoctl = 2, 2
	case DriverOOT40052:
		p.DefaultInstances = 256
	}
	return p
}

// Validate checks the name.
func (d Driver) Validate() error {
	for _, k := range Drivers() {
		if d == k {
			return nil
		}
	}
	return fmt.Errorf("driver: %q is not one of %v", string(d), Drivers())
}

// CompletionMode is how a process learns that its requests completed.
type CompletionMode string

// Completion modes.
const (
	// Polling: the caller polls the response ring (icp_sal_DcPollInstance)
	// and spends its own core's time doing so.
	Polling CompletionMode = "polling"
	// Thread: completions raise an interrupt and a driver thread wakes
	// the waiting caller through a futex: a sleep, a wake-up and a context
	// switch per completion (the seed's futex storm).
	Thread CompletionMode = "thread"
)

// Validate checks the name.
func (c CompletionMode) Validate() error {
	if c == Polling || c == Thread {
		return nil
	}
	return fmt.Errorf("completion: %q is not polling or thread", string(c))
}
