package zlibshim

import "time"

// Reason is why a request that was meant for hardware was not served
// there.
type Reason int

// Reasons. Each has a counter in FallbackCounts.
const (
	ReasonNone           Reason = iota
	ReasonNoInstance            // Attach: every instance is held (hw.ErrNoInstance)
	ReasonNoPinnedMemory        // AllocPinned: USDM exhausted (hw.ErrNoPinnedMemory)
	ReasonDeviceDown            // Attach or a request: device resetting or failed (hw.ErrDeviceDown)
	ReasonEngineError           // the request completed with an error status
	ReasonTimeout               // the request did not complete within Config.Timeout (hang)
	ReasonEnqueueRefused        // the request ring stayed full
	ReasonOverflow              // the output did not fit the destination buffer
	ReasonAttachError           // Attach failed for another reason
)

func (r Reason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonNoInstance:
		return "no_instance"
	case ReasonNoPinnedMemory:
		return "no_pinned_memory"
	case ReasonDeviceDown:
		return "device_down"
	case ReasonEngineError:
		return "engine_error"
	case ReasonTimeout:
		return "timeout"
	case ReasonEnqueueRefused:
		return "enqueue_refused"
	case ReasonOverflow:
		return "overflow"
	case ReasonAttachError:
		return "attach_error"
	}
	return "unknown"
}

// FallbackCounts counts hardware failures by reason. Under failover each
// one is a request redone in software; under hardware-only, an error.
type FallbackCounts struct {
	NoInstance     uint64 `json:"no_instance"`
	NoPinnedMemory uint64 `json:"no_pinned_memory"`
	DeviceDown     uint64 `json:"device_down"`
	EngineError    uint64 `json:"engine_error"`
	Timeout        uint64 `json:"timeout"`
	EnqueueRefused uint64 `json:"enqueue_refused"`
	Overflow       uint64 `json:"overflow"`
	AttachError    uint64 `json:"attach_error"`
}

// Total is the sum over reasons.
func (f FallbackCounts) Total() uint64 {
	return f.NoInstance + f.NoPinnedMemory + f.DeviceDown + f.EngineError +
		f.Timeout + f.EnqueueRefused + f.Overflow + f.AttachError
}

// Of returns the counter of one reason.
func (f *FallbackCounts) Of(r Reason) *uint64 {
	switch r {
	case ReasonNoInstance:
		return &f.NoInstance
	case ReasonNoPinnedMemory:
		return &f.NoPinnedMemory
	case ReasonDeviceDown:
		return &f.DeviceDown
	case ReasonEngineError:
		return &f.EngineError
	case ReasonTimeout:
		return &f.Timeout
	case ReasonEnqueueRefused:
		return &f.EnqueueRefused
	case ReasonOverflow:
		return &f.Overflow
	}
	return &f.AttachError
}

// Stats are a Process's counters. Bytes "in" are uncompressed input of
// deflate; "out" are its compressed output.
type Stats struct {
	// Hardware requests that succeeded, and their bytes.
	HWRequests uint64 `json:"hw_requests"`
	HWBytesIn  uint64 `json:"hw_bytes_in"`
	HWBytesOut uint64 `json:"hw_bytes_out"`
	// Software deflate: requests (units of up to RequestSize) and bytes.
	SWRequests uint64 `json:"sw_requests"`
	SWBytesIn  uint64 `json:"sw_bytes_in"`
	SWBytesOut uint64 `json:"sw_bytes_out"`
	// Why software served a request that was not a fallback.
	SmallRequests       uint64 `json:"small_requests"`       // below SoftwareThreshold
	UnsupportedRequests uint64 `json:"unsupported_requests"` // level 0, Huffman-only or RLE strategy
	BackoffRequests     uint64 `json:"backoff_requests"`     // waiting RetryAfter requests after a failure
	// Hardware failures by reason.
	Fallbacks FallbackCounts `json:"fallbacks"`
	// HardwareOnlyErrors counts requests failed under hardware-only.
	HardwareOnlyErrors uint64 `json:"hardware_only_errors"`
	// The return rule: tries of hardware after a backoff, how many failed
	// again, and how many brought the process back to hardware.
	RetryAttempts uint64 `json:"retry_attempts"`
	RetriesFailed uint64 `json:"retries_failed"`
	ReturnsToHW   uint64 `json:"returns_to_hw"`
	// Instances. StartFailures counts Start calls that found no instance.
	InstanceAttaches uint64 `json:"instance_attaches"`
	StartFailures    uint64 `json:"start_failures"`
	InstanceDetaches uint64 `json:"instance_detaches"`
	// Pinned (USDM) memory.
	PinnedAllocs     uint64 `json:"pinned_allocs"`
	PinnedFrees      uint64 `json:"pinned_frees"`
	PinnedBytesInUse int64  `json:"pinned_bytes_in_use"`
	PinnedBytesPeak  int64  `json:"pinned_bytes_peak"`
	// Completion: polls of the response ring, waits in thread mode, the
	// futex calls those waits imply (a wait and a wake each), late
	// completions of requests given up as hung, and staging copies.
	Polls           uint64 `json:"polls"`
	EmptyPolls      uint64 `json:"empty_polls"`
	Waits           uint64 `json:"waits"`
	Syscalls        uint64 `json:"syscalls"`
	LateCompletions uint64 `json:"late_completions"`
	StagedBytes     uint64 `json:"staged_bytes"`
	// Checksums taken from the device rather than computed in software.
	HWChecksums uint64 `json:"hw_checksums"`
	// Streams: opened, ended, and reclaimed unended at Exit.
	DeflateStreams uint64 `json:"deflate_streams"`
	InflateStreams uint64 `json:"inflate_streams"`
	StreamsEnded   uint64 `json:"streams_ended"`
	StreamsLeaked  uint64 `json:"streams_leaked"`
	// Inflate.
	InflateBytesIn  uint64 `json:"inflate_bytes_in"`
	InflateBytesOut uint64 `json:"inflate_bytes_out"`
	InflateErrors   uint64 `json:"inflate_errors"`
}

// Status is the shim's answer to "what is the accelerator doing for me",
// in the spirit of QATzip's qzGetStatus.
type Status struct {
	Policy Policy `json:"policy"`
	// HardwareAvailable: the process has a service, its policy allows
	// hardware, and it is not backing off after a failure.
	HardwareAvailable bool `json:"hardware_available"`
	// BackingOff: requests left in software before hardware is retried.
	BackingOff int `json:"backing_off"`
	// InstancesAttached: instances the process and its streams hold.
	InstancesAttached int `json:"instances_attached"`
	// OffloadedBytes and SoftwareBytes are deflate input bytes.
	OffloadedBytes uint64         `json:"offloaded_bytes"`
	SoftwareBytes  uint64         `json:"software_bytes"`
	Fallbacks      FallbackCounts `json:"fallbacks"`
	ReturnsToHW    uint64         `json:"returns_to_hw"`
	PinnedInUse    int64          `json:"pinned_in_use"`
	OpenStreams    int            `json:"open_streams"`
	// LeakedStreams: open streams idle longer than LeakAge, plus those
	// reclaimed unended at Exit.
	LeakedStreams int `json:"leaked_streams"`
}

// StreamKind says which way a stream goes.
type StreamKind int

// Stream kinds.
const (
	KindDeflate StreamKind = iota
	KindInflate
)

func (k StreamKind) String() string {
	if k == KindInflate {
		return "inflate"
	}
	return "deflate"
}

// MarshalText implements encoding.TextMarshaler, for JSON reports.
func (k StreamKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// MarshalText implements encoding.TextMarshaler, for JSON reports.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// LeakedStream is one line of a leak report.
type LeakedStream struct {
	ID            uint64        `json:"id"`
	Kind          StreamKind    `json:"kind"`
	Opened        time.Duration `json:"opened"`
	LastUsed      time.Duration `json:"last_used"`
	PinnedBytes   int64         `json:"pinned_bytes"`
	HoldsInstance bool          `json:"holds_instance"`
}

// ResetStats starts a new measurement window, as the end of a warm-up
// does. The rule: counters (requests, bytes, fallbacks, retries,
// attaches, allocations, frees, polls, waits, syscalls, streams opened,
// ended and leaked...) go to zero; gauges (what is held now: pinned bytes
// in use, the streams open, the instances held, the backoff under way)
// keep their value, since the process still holds them and frees will
// subtract from them; the peak of pinned bytes restarts from the bytes
// in use now, so that it is the peak of the new window. The streams
// reclaimed at Exit that Status counts as leaked are leaks detected, and
// go to zero with StreamsLeaked.
func (p *Process) ResetStats() {
	inUse := p.stats.PinnedBytesInUse
	p.stats = Stats{PinnedBytesInUse: inUse, PinnedBytesPeak: inUse}
	p.reclaimed = 0
}
