package qat

import (
	"sort"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// SyscallCounts counts the syscalls the driver made, by kind.
type SyscallCounts struct {
	Open  uint64 `json:"open"`
	Ioctl uint64 `json:"ioctl"`
	Futex uint64 `json:"futex"`
	Mmap  uint64 `json:"mmap"`
}

// Total is the sum over kinds.
func (c SyscallCounts) Total() uint64 { return c.Open + c.Ioctl + c.Futex + c.Mmap }

// ErrorCounts counts failed requests by kind.
type ErrorCounts struct {
	// InvalidArgs: an op the device does not support (level, flush,
	// checksum, window) or a nil op.
	InvalidArgs uint64 `json:"invalid_args"`
	// OutOfSpace: the destination was too small.
	OutOfSpace uint64 `json:"out_of_space"`
	// Corrupt: decompression of a malformed stream.
	Corrupt uint64 `json:"corrupt"`
	// Engine: the engine_error fault.
	Engine uint64 `json:"engine"`
	// Hang: requests that hung and were failed when the hang cleared.
	Hang uint64 `json:"hang"`
	// Reset: requests in flight at a device reset.
	Reset uint64 `json:"reset"`
	// Heartbeat: requests in flight when the heartbeat failed.
	Heartbeat uint64 `json:"heartbeat"`
}

// Directions is a count for each direction of the device.
type Directions struct {
	Compress   uint64 `json:"compress"`
	Decompress uint64 `json:"decompress"`
}

// add adds n to direction dir (0 compression, 1 decompression).
func (d *Directions) add(dir int, n uint64) {
	if dir == 0 {
		d.Compress += n
	} else {
		d.Decompress += n
	}
}

// LeakCounts is what processes still held when they exited.
type LeakCounts struct {
	Buffers uint64 `json:"buffers"`
	Bytes   uint64 `json:"bytes"`
	Pages   uint64 `json:"pages"`
}

// AttachFailureCounts counts refused attaches by reason.
type AttachFailureCounts struct {
	NoInstance uint64 `json:"no_instance"`
	DeviceDown uint64 `json:"device_down"`
	NoDevice   uint64 `json:"no_device"`
}

// EngineStats is what one compression engine did.
type EngineStats struct {
	Requests uint64 `json:"requests"`
	BytesIn  uint64 `json:"bytes_in"`
	BytesOut uint64 `json:"bytes_out"`
	Errors   uint64 `json:"errors"`
	// Busy is the service time it spent.
	Busy time.Duration `json:"busy_ns"`
	// QueueWait is the time requests waited for it; MaxQueueWait the
	// longest wait.
	QueueWait    time.Duration `json:"queue_wait_ns"`
	MaxQueueWait time.Duration `json:"max_queue_wait_ns"`
}

// QueuePairStats is what one instance's rings did.
type QueuePairStats struct {
	Attaches    uint64 `json:"attaches"`
	Enqueued    uint64 `json:"enqueued"`
	Dequeued    uint64 `json:"dequeued"`
	RingFull    uint64 `json:"ring_full"`
	MaxInFlight int    `json:"max_in_flight"`
}

// DeviceCounters are a device's counters.
type DeviceCounters struct {
	Attaches uint64 `json:"attaches"`
	Detaches uint64 `json:"detaches"`
	// AttachFailures counts attaches this device could not serve because
	// every instance was held.
	AttachFailures uint64 `json:"attach_failures"`
	// Requests, BytesIn and BytesOut are by direction.
	Requests Directions `json:"requests"`
	BytesIn  Directions `json:"bytes_in"`
	BytesOut Directions `json:"bytes_out"`
	// Streams counts requests in the seed's sense: compression or
	// decompression streams begun.
	Streams uint64 `json:"streams"`
	// InFlight is requests enqueued and not dequeued (the queue depth);
	// MaxInFlight its peak.
	InFlight    uint64 `json:"in_flight"`
	MaxInFlight uint64 `json:"max_in_flight"`
	// RingFull counts ops refused because their ring was full (retry
	// later).
	RingFull uint64 `json:"ring_full"`
	// EnqueueRefusedDown counts ops refused while the device was down.
	EnqueueRefusedDown uint64 `json:"enqueue_refused_down"`
	// InvalidQueuePair and UnattachedQueuePair count ops sent to a queue
	// pair that does not exist or that no process holds.
	InvalidQueuePair    uint64 `json:"invalid_queue_pair"`
	UnattachedQueuePair uint64 `json:"unattached_queue_pair"`
	// DroppedOnDetach counts ops still in an instance's rings when it
	// was given back.
	DroppedOnDetach uint64      `json:"dropped_on_detach"`
	Errors          ErrorCounts `json:"errors"`
	// Polls and IdlePolls count response-ring polls that found something
	// and that found nothing (including WaitCompletion's spins).
	Polls     uint64 `json:"polls"`
	IdlePolls uint64 `json:"idle_polls"`
	// Wakeups, ContextSwitches and WaitTimeouts are thread-mode waits.
	Wakeups           uint64        `json:"wakeups"`
	ContextSwitches   uint64        `json:"context_switches"`
	WaitTimeouts      uint64        `json:"wait_timeouts"`
	HungRequests      uint64        `json:"hung_requests"`
	FaultsInjected    uint64        `json:"faults_injected"`
	Resets            uint64        `json:"resets"`
	HeartbeatFailures uint64        `json:"heartbeat_failures"`
	Syscalls          SyscallCounts `json:"syscalls"`
}

// DeviceStats is a snapshot of one device.
type DeviceStats struct {
	Name        string `json:"name"`
	Model       string `json:"model"`
	Driver      string `json:"driver"`
	NUMANode    int    `json:"numa_node"`
	VFs         int    `json:"vfs"`
	Instances   int    `json:"instances"`
	InUse       int    `json:"instances_in_use"`
	HeldByFault int    `json:"instances_held_by_fault"`
	Free        int    `json:"instances_free"`
	Down        bool   `json:"down"`
	Hung        bool   `json:"hung"`
	DeviceCounters
	Engines    []EngineStats    `json:"engines"`
	QueuePairs []QueuePairStats `json:"queue_pairs"`
}

// ProcessStats is what one process holds and did.
type ProcessStats struct {
	PID    int  `json:"pid"`
	Exited bool `json:"exited"`
	// Instances is how many it holds now.
	Instances      int    `json:"instances"`
	Attaches       uint64 `json:"attaches"`
	Detaches       uint64 `json:"detaches"`
	AttachFailures uint64 `json:"attach_failures"`
	// InstancesAtExit counts instances given back by its exit.
	InstancesAtExit uint64 `json:"instances_at_exit"`
	Requests        uint64 `json:"requests"`
	// Buffers, BufferBytes and Pages are the pinned memory it holds now
	// (Pages: USDM hugepages).
	Buffers       int64  `json:"buffers"`
	BufferBytes   uint64 `json:"buffer_bytes"`
	Pages         int64  `json:"pages"`
	AllocFailures uint64 `json:"alloc_failures"`
	// KernelAllocs and CompactedPages are the legacy driver's kernel
	// contiguous allocations and the pages they migrated.
	KernelAllocs   uint64        `json:"kernel_allocs"`
	CompactedPages uint64        `json:"compacted_pages"`
	Leaked         LeakCounts    `json:"leaked"`
	Syscalls       SyscallCounts `json:"syscalls"`
}

// NodeStats is USDM and kernel memory on one node.
type NodeStats struct {
	Node                   int     `json:"node"`
	MaxHugePages           int     `json:"max_huge_pages"`
	MaxHugePagesPerProcess int     `json:"max_huge_pages_per_process"`
	PagesInUse             int     `json:"pages_in_use"`
	PeakPages              int     `json:"peak_pages"`
	PageAllocs             uint64  `json:"page_allocs"`
	PageFrees              uint64  `json:"page_frees"`
	AllocFailures          uint64  `json:"alloc_failures"`
	LeakedPages            uint64  `json:"leaked_pages"`
	LeakedBuffers          uint64  `json:"leaked_buffers"`
	LeakedBytes            uint64  `json:"leaked_bytes"`
	Fragmentation          float64 `json:"fragmentation"`
	KernelAllocs           uint64  `json:"kernel_allocs"`
	KernelFrees            uint64  `json:"kernel_frees"`
	KernelPagesAllocated   uint64  `json:"kernel_pages_allocated"`
	CompactedPages         uint64  `json:"compacted_pages"`
	LastCompactedPages     uint64  `json:"last_compacted_pages"`
}

// ServiceCounters are the host-wide counters.
type ServiceCounters struct {
	Attaches            uint64              `json:"attaches"`
	AttachFailures      AttachFailureCounts `json:"attach_failures"`
	BadDetaches         uint64              `json:"bad_detaches"`
	Exits               uint64              `json:"exits"`
	PinnedAllocs        uint64              `json:"pinned_allocs"`
	PinnedFrees         uint64              `json:"pinned_frees"`
	PinnedAllocFailures uint64              `json:"pinned_alloc_failures"`
	BadFrees            uint64              `json:"bad_frees"`
	HugepageFreeErrors  uint64              `json:"hugepage_free_errors"`
	Leaked              LeakCounts          `json:"leaked"`
	Syscalls            SyscallCounts       `json:"syscalls"`
}

// ServiceStats is a snapshot of the host's QAT.
type ServiceStats struct {
	ServiceCounters
	InstancesInUse int            `json:"instances_in_use"`
	InstancesFree  int            `json:"instances_free"`
	Devices        []DeviceStats  `json:"devices"`
	Processes      []ProcessStats `json:"processes"`
	Nodes          []NodeStats    `json:"nodes"`
}

// DeviceStats returns a snapshot of one device.
func (d *Device) DeviceStats() DeviceStats {
	st := DeviceStats{Name: d.name, Model: d.model.Name, Driver: string(d.driver), NUMANode: d.node, VFs: d.vfs,
		Instances: len(d.qps), DeviceCounters: d.counters, Hung: d.faults.hung,
		Down: d.faults.heartbeatDown || d.faults.resetting}
	for _, q := range d.qps {
		if q.owner != nil {
			st.InUse++
		}
		st.QueuePairs = append(st.QueuePairs, q.stats)
	}
	st.HeldByFault = min(d.heldByFault(), len(d.qps)-st.InUse)
	st.Free = len(d.qps) - st.InUse - st.HeldByFault
	for _, e := range d.engines {
		st.Engines = append(st.Engines, e.stats)
	}
	return st
}

// Stats returns a snapshot of the host's QAT: devices in configuration
// order, processes by pid, nodes by number.
func (s *Service) Stats() ServiceStats {
	st := ServiceStats{ServiceCounters: s.counters}
	for _, d := range s.devices {
		ds := d.DeviceStats()
		st.InstancesInUse += ds.InUse
		st.InstancesFree += ds.Free
		st.Devices = append(st.Devices, ds)
	}
	pids := make([]int, 0, len(s.procs))
	for pid := range s.procs {
		pids = append(pids, int(pid))
	}
	sort.Ints(pids)
	for _, pid := range pids {
		st.Processes = append(st.Processes, s.ProcessStats(hw.ProcessID(pid)))
	}
	nodes := map[int]bool{}
	for n := range s.pools {
		nodes[n] = true
	}
	for n := range s.frag {
		nodes[n] = true
	}
	ns := make([]int, 0, len(nodes))
	for n := range nodes {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	for _, n := range ns {
		st.Nodes = append(st.Nodes, s.NodeStats(n))
	}
	return st
}

// ProcessStats returns what process pid holds and did.
func (s *Service) ProcessStats(pid hw.ProcessID) ProcessStats {
	p := s.procs[pid]
	if p == nil {
		return ProcessStats{PID: int(pid)}
	}
	st := p.stats
	st.Instances = len(p.insts)
	return st
}

// NodeStats returns USDM and kernel-memory figures of one node.
func (s *Service) NodeStats(node int) NodeStats {
	pool := s.pool(node)
	f := s.fragOf(node)
	return NodeStats{
		Node: node, MaxHugePages: pool.cfg.MaxHugePages, MaxHugePagesPerProcess: pool.cfg.MaxHugePagesPerProcess,
		PagesInUse: pool.pagesInUse, PeakPages: pool.peakPages, PageAllocs: pool.allocs, PageFrees: pool.frees,
		AllocFailures: pool.failures, LeakedPages: pool.leakedPages,
		LeakedBuffers: pool.leakedBuffers, LeakedBytes: pool.leakedBytes,
		Fragmentation: f.f, KernelAllocs: f.allocs, KernelFrees: f.frees, KernelPagesAllocated: f.pagesAllocated,
		CompactedPages: f.compacted, LastCompactedPages: f.lastCompacted,
	}
}

// ResetStats starts a new measurement window, as the end of a warm-up
// does, for the whole host: the service, every device, engine and queue
// pair, every process and every node's USDM and kernel memory. The rule:
// counters (events counted: attaches, requests, bytes, syscalls, polls,
// errors, busy time, queue wait, leaks detected, allocations, frees,
// failures, compacted pages) go to zero; gauges (what is held now:
// requests in flight, instances in use and free, processes' instances,
// buffers and pages, pages in use, fragmentation, the last allocation's
// compaction, down and hung, configuration) keep their value, since the
// hardware still holds them; peaks restart from their gauge's current
// value (max in flight from in flight, peak pages from pages in use) so
// that they describe the new window, and the longest queue wait restarts
// at 0 (no request has waited in the new window yet). Processes that
// exited stay listed, with their counters zeroed.
func (s *Service) ResetStats() {
	s.counters = ServiceCounters{}
	for _, d := range s.devices {
		d.ResetStats()
	}
	for _, p := range s.procs {
		p.resetStats()
	}
	for _, pool := range s.pools {
		pool.resetStats()
	}
	for _, f := range s.frag {
		f.resetStats()
	}
}

// ResetStats starts a new measurement window for one device
// (rte_compressdev_stats_reset and the model's own counters), by the
// rule of Service.ResetStats: its counters, its engines' and queue
// pairs' counters and the compressdev stats go to zero; InFlight is a
// gauge and stays (those requests are still in the rings and will be
// dequeued, which must not take it below zero); MaxInFlight and each
// queue pair's MaxInFlight restart from what is in flight now; each
// engine's MaxQueueWait restarts at 0.
func (d *Device) ResetStats() {
	inFlight := d.counters.InFlight
	d.counters = DeviceCounters{InFlight: inFlight, MaxInFlight: inFlight}
	d.hwstats = hw.CompressStats{}
	for i := range d.engines {
		// freeAt is the engine's schedule, not a statistic: requests
		// queued before the reset still occupy it.
		d.engines[i].stats = EngineStats{}
	}
	for _, q := range d.qps {
		q.stats = QueuePairStats{MaxInFlight: q.n}
	}
}

// resetStats zeroes a process's counters and keeps what it holds now
// (its identity, whether it exited, its instances, pinned buffers, their
// bytes and its USDM pages: FreePinned and Exit subtract from them).
func (p *process) resetStats() {
	st := p.stats
	p.stats = ProcessStats{
		PID: st.PID, Exited: st.Exited, Instances: st.Instances,
		Buffers: st.Buffers, BufferBytes: st.BufferBytes, Pages: st.Pages,
	}
}

// resetStats zeroes a USDM pool's counters; the pages in use are held
// and stay, and the peak restarts from them.
func (pool *usdmPool) resetStats() {
	pool.allocs, pool.frees, pool.failures = 0, 0, 0
	pool.leakedPages, pool.leakedBuffers, pool.leakedBytes = 0, 0, 0
	pool.peakPages = pool.pagesInUse
}

// resetStats zeroes the kernel-allocation counters of a node. The
// fragmentation is the state of the node's free memory and stays;
// lastCompacted is the cost of the latest allocation, an observation
// rather than a sum over the window, and stays too.
func (f *fragState) resetStats() {
	f.allocs, f.frees, f.pagesAllocated, f.compacted = 0, 0, 0, 0
}
