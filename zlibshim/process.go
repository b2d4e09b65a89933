package zlibshim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/klauspost/compress/flate"
	"github.com/savanna-sim/savanna/hw"
)

// Process is the shim's state for one worker process: the accelerator
// service it draws on, the process's identity there, the meter its work
// is charged to, its policy, its registry of open streams and its
// statistics. There is no package-level state: two processes (two Tengine
// workers, an old and a new one during a reload) are two values.
//
// A Process is not safe for concurrent use, as a zlib z_stream is not:
// Tengine's workers are single-threaded.
type Process struct {
	svc   hw.CompressService
	pid   hw.ProcessID
	meter hw.Meter
	cfg   Config

	// inst is the process's instance when instances are per process.
	inst hw.CompressInstance
	// instances counts instances held by the process and its streams.
	instances int

	// streams is the registry of open streams, read by leak reports.
	streams    map[uint64]*streamEntry
	nextStream uint64
	nextOp     uint64
	// quarantine holds the pinned buffers of requests given up as hung:
	// the device may still write them, so they are freed only when the
	// late completion is dequeued or at Exit.
	quarantine map[uint64]quarantined

	// The return rule: backoff is how many requests are still to be
	// served in software; failed says hardware has not served since the
	// last failure; retrying says the current request is a retry.
	backoff  int
	failed   bool
	retrying bool

	// writers are idle software compressors by klauspost level (+2, so
	// Huffman-only's -2 is index 0): a stream per HTTP response would
	// otherwise allocate one, hundreds of KiB, for every small response.
	writers [12][]*flate.Writer

	reclaimed int
	exited    bool
	stats     Stats
	deq       [8]*hw.CompOp
}

// quarantined are the pinned buffers of a request given up as hung, and
// the instance it was submitted on.
type quarantined struct {
	inst hw.CompressInstance
	bufs []*hw.PinnedBuffer
}

// NewProcess makes the shim's state for process pid. svc may be nil (no
// accelerator on the machine: everything runs in software, as Tengine's
// package picks its software binary); meter may be nil (work is then
// counted on a private hw.CountingMeter).
func NewProcess(svc hw.CompressService, pid hw.ProcessID, meter hw.Meter, cfg Config) (*Process, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("zlibshim: process %d config: %w", pid, err)
	}
	if svc == nil && cfg.Policy == PolicyHardwareOnly {
		return nil, fmt.Errorf("zlibshim: process %d: policy hardware-only without a compression service: %w", pid, ErrHardware)
	}
	if meter == nil {
		meter = &hw.CountingMeter{}
	}
	return &Process{
		svc:        svc,
		pid:        pid,
		meter:      meter,
		cfg:        cfg.withDefaults(),
		streams:    make(map[uint64]*streamEntry),
		quarantine: make(map[uint64]quarantined),
	}, nil
}

// Config returns the configuration with defaults filled in.
func (p *Process) Config() Config { return p.cfg }

// PID returns the process's identity at the service.
func (p *Process) PID() hw.ProcessID { return p.pid }

// Meter returns the meter the process's work is charged to.
func (p *Process) Meter() hw.Meter { return p.meter }

// Stats returns a copy of the counters.
func (p *Process) Stats() Stats { return p.stats }

// hardwareAllowed says whether the policy and the machine allow hardware.
func (p *Process) hardwareAllowed() bool {
	return p.svc != nil && p.cfg.Policy != PolicySoftwareOnly && !p.exited
}

// Status reports the process's accelerator state (cf. qzGetStatus).
func (p *Process) Status() Status {
	now := p.meter.Now()
	leaked := p.reclaimed
	for _, e := range p.streams {
		if now-e.lastUsed >= p.cfg.LeakAge {
			leaked++
		}
	}
	return Status{
		Policy:            p.cfg.Policy,
		HardwareAvailable: p.hardwareAllowed() && p.backoff == 0,
		BackingOff:        p.backoff,
		InstancesAttached: p.instances,
		OffloadedBytes:    p.stats.HWBytesIn,
		SoftwareBytes:     p.stats.SWBytesIn,
		Fallbacks:         p.stats.Fallbacks,
		ReturnsToHW:       p.stats.ReturnsToHW,
		PinnedInUse:       p.stats.PinnedBytesInUse,
		OpenStreams:       len(p.streams),
		LeakedStreams:     leaked,
	}
}

// classify maps a service error to a fallback reason.
func classify(err error) Reason {
	switch {
	case errors.Is(err, hw.ErrNoInstance):
		return ReasonNoInstance
	case errors.Is(err, hw.ErrNoPinnedMemory):
		return ReasonNoPinnedMemory
	case errors.Is(err, hw.ErrDeviceDown):
		return ReasonDeviceDown
	}
	return ReasonAttachError
}

// attach takes an instance from the service.
func (p *Process) attach() (hw.CompressInstance, Reason) {
	inst, err := p.svc.Attach(p.pid, p.cfg.NUMANode)
	if err != nil {
		return nil, classify(err)
	}
	if inst == nil {
		return nil, ReasonAttachError
	}
	p.stats.InstanceAttaches++
	p.instances++
	return inst, ReasonNone
}

// detach returns an instance. An error from the service (the device is
// resetting) still ends our hold: the service takes it back at Exit.
// Requests still on the instance are dropped by the driver, so the
// buffers of the hung ones among them can be freed.
func (p *Process) detach(inst hw.CompressInstance) {
	err := p.svc.Detach(p.pid, inst)
	p.stats.InstanceDetaches++
	p.instances--
	if err == nil {
		p.releaseQuarantine(inst)
	}
}

// hungOn reports whether requests given up as hung are still on inst.
func (p *Process) hungOn(inst hw.CompressInstance) bool {
	for _, q := range p.quarantine {
		if q.inst == inst {
			return true
		}
	}
	return false
}

// releaseQuarantine frees, in request order, the buffers of hung requests
// on inst (all of them when inst is nil).
func (p *Process) releaseQuarantine(inst hw.CompressInstance) {
	ids := make([]uint64, 0, len(p.quarantine))
	for id, q := range p.quarantine {
		if inst == nil || q.inst == inst {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		for _, b := range p.quarantine[id].bufs {
			p.freePinned(b)
		}
		delete(p.quarantine, id)
	}
}

// allocPinned takes pinned memory from the service.
func (p *Process) allocPinned(size, node int) (*hw.PinnedBuffer, Reason) {
	b, err := p.svc.AllocPinned(p.pid, size, node)
	if err != nil {
		return nil, classify(err)
	}
	if b == nil || len(b.Bytes) < size {
		if b != nil {
			_ = p.svc.FreePinned(b)
		}
		return nil, ReasonNoPinnedMemory
	}
	p.stats.PinnedAllocs++
	p.stats.PinnedBytesInUse += int64(len(b.Bytes))
	p.stats.PinnedBytesPeak = max(p.stats.PinnedBytesPeak, p.stats.PinnedBytesInUse)
	return b, ReasonNone
}

// freePinned returns pinned memory.
func (p *Process) freePinned(b *hw.PinnedBuffer) {
	if b == nil {
		return
	}
	_ = p.svc.FreePinned(b)
	p.stats.PinnedFrees++
	p.stats.PinnedBytesInUse -= int64(len(b.Bytes))
}

// admit decides whether a request that hardware could serve goes there,
// applying the return rule: after a failure, RetryAfter requests go to
// software, then hardware is tried again.
func (p *Process) admit() bool {
	p.retrying = false
	if p.backoff > 0 {
		p.backoff--
		p.stats.BackoffRequests++
		return false
	}
	if p.failed {
		p.retrying = true
		p.stats.RetryAttempts++
	}
	return true
}

// hwFailed records a hardware failure and starts a backoff. Under
// hardware-only it returns the error the request fails with.
func (p *Process) hwFailed(r Reason, where string) error {
	*p.stats.Fallbacks.Of(r)++
	if p.retrying {
		p.stats.RetriesFailed++
		p.retrying = false
	}
	if p.cfg.Policy == PolicyHardwareOnly {
		p.stats.HardwareOnlyErrors++
		return fmt.Errorf("zlibshim: process %d: %s: %s: %w", p.pid, where, r, ErrHardware)
	}
	p.backoff = p.cfg.RetryAfter
	p.failed = true
	return nil
}

// hwServed records a request the hardware served.
func (p *Process) hwServed() {
	if p.failed {
		p.failed = false
		p.stats.ReturnsToHW++
	}
	p.retrying = false
}

// lateCompletion handles a dequeued operation that is not the one being
// waited for: the completion of a request given up as hung. Its
// quarantined buffers can be freed now.
func (p *Process) lateCompletion(op *hw.CompOp) {
	p.stats.LateCompletions++
	if q, ok := p.quarantine[op.UserData]; ok {
		for _, b := range q.bufs {
			p.freePinned(b)
		}
		delete(p.quarantine, op.UserData)
	}
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Start takes the process's instance now, as a worker's initialisation
// does (Tengine's QAT module calls icp_sal_userStart and takes its
// instance in init_process), rather than at its first request. A worker
// started while every instance is held gets none: the failure is
// counted as a no_instance fallback and the first requests follow the
// policy (software under failover, an error under hardware-only) until an
// attach succeeds. With InstancePerStream or no accelerator there is
// nothing to take, and Start does nothing.
func (p *Process) Start() error {
	if p.svc == nil || p.cfg.InstancePerStream || p.inst != nil || !p.hardwareAllowed() {
		return nil
	}
	inst, r := p.attach()
	if r != ReasonNone {
		*p.stats.Fallbacks.Of(r)++
		p.stats.StartFailures++
		if p.cfg.Policy != PolicyHardwareOnly {
			p.backoff = p.cfg.RetryAfter
			p.failed = true
		}
		return fmt.Errorf("zlibshim: process %d: start: %s", p.pid, r)
	}
	p.inst = inst
	return nil
}
