package qat

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// FaultKind names a fault that scenarios and tests can inject.
type FaultKind string

// Fault kinds.
const (
	// FaultInstanceExhaustion holds instances of the device as if other
	// processes had them (FaultParams.Instances; 0 = all).
	FaultInstanceExhaustion FaultKind = "instance_exhaustion"
	// FaultUSDMExhaustion makes USDM allocations on the device's node fail.
	FaultUSDMExhaustion FaultKind = "usdm_exhaustion"
	// FaultEngineError fails a share of requests (FaultParams.Rate) with
	// StatusError, drawn from the service's seeded RNG.
	FaultEngineError FaultKind = "engine_error"
	// FaultHang stops the engines: requests never complete until the
	// fault is cleared, when the hung ones fail.
	FaultHang FaultKind = "hang"
	// FaultReset resets the device: in-flight requests fail with
	// "device reset" and the device refuses work for FaultParams.Delay.
	FaultReset FaultKind = "reset"
	// FaultHeartbeat marks the device as failed its heartbeat: in-flight
	// requests fail and it stays down until cleared.
	FaultHeartbeat FaultKind = "heartbeat"
)

// FaultKinds lists every kind.
func FaultKinds() []FaultKind {
	return []FaultKind{FaultInstanceExhaustion, FaultUSDMExhaustion, FaultEngineError, FaultHang, FaultReset, FaultHeartbeat}
}

// Validate checks the name.
func (k FaultKind) Validate() error {
	for _, f := range FaultKinds() {
		if k == f {
			return nil
		}
	}
	return fmt.Errorf("kind: %q is not one of %v", string(k), FaultKinds())
}

// FaultParams are the parameters of an injected fault.
type FaultParams struct {
	// At is when the fault happens (the event's simulated time; 0 means
	// Options.Clock's now when the service has a clock). A reset lasts
	// from At to At+Delay; requests in flight at At fail.
	At time.Duration
	// Rate is the share of failing requests (engine_error).
	Rate float64
	// Instances is how many instances to hold (instance_exhaustion);
	// 0 holds every instance.
	Instances int
	// Delay is how long a reset keeps the device down.
	Delay time.Duration
}

// faultState is what a device's faults currently are.
type faultState struct {
	heldInstances int  // instances held by instance_exhaustion
	holdAll       bool // instance_exhaustion with Instances == 0
	usdmExhausted bool
	errorRate     float64
	hung          bool
	downUntil     time.Duration // reset: unavailable before this time
	resetting     bool
	heartbeatDown bool
}

// InjectFault sets a fault on the device. Faults of different kinds
// combine; injecting a kind again replaces its parameters.
func (d *Device) InjectFault(kind FaultKind, p FaultParams) error {
	if err := kind.Validate(); err != nil {
		return fmt.Errorf("qat %s: inject fault: %w", d.name, err)
	}
	if p.Rate < 0 || p.Rate > 1 {
		return fmt.Errorf("qat %s: inject fault %s: rate %v is not in 0..1", d.name, kind, p.Rate)
	}
	if p.At == 0 && d.svc.clock != nil {
		p.At = d.svc.clock()
	}
	d.counters.FaultsInjected++
	switch kind {
	case FaultInstanceExhaustion:
		d.faults.heldInstances, d.faults.holdAll = p.Instances, p.Instances == 0
	case FaultUSDMExhaustion:
		d.faults.usdmExhausted = true
	case FaultEngineError:
		d.faults.errorRate = p.Rate
	case FaultHang:
		d.faults.hung = true
		d.hangInFlight()
	case FaultReset:
		d.counters.Resets++
		d.faults.resetting = true
		d.faults.downUntil = p.At + p.Delay
		d.failInFlight(p.At, "device reset", &d.counters.Errors.Reset)
	case FaultHeartbeat:
		d.counters.HeartbeatFailures++
		d.faults.heartbeatDown = true
		d.failInFlight(p.At, "heartbeat failure: device down", &d.counters.Errors.Heartbeat)
	}
	return nil
}

// Clear ends a fault of the given kind. Clearing a hang fails the
// requests that hung (the driver's timeout gives up on them); clearing a
// reset brings the device back at once.
func (d *Device) Clear(kind FaultKind) error {
	if err := kind.Validate(); err != nil {
		return fmt.Errorf("qat %s: clear fault: %w", d.name, err)
	}
	switch kind {
	case FaultInstanceExhaustion:
		d.faults.heldInstances, d.faults.holdAll = 0, false
	case FaultUSDMExhaustion:
		d.faults.usdmExhausted = false
	case FaultEngineError:
		d.faults.errorRate = 0
	case FaultHang:
		d.faults.hung = false
		d.failHung()
	case FaultReset:
		d.faults.resetting, d.faults.downUntil = false, 0
	case FaultHeartbeat:
		d.faults.heartbeatDown = false
	}
	return nil
}

// down reports whether the device refuses work at time now, and why.
func (d *Device) down(now time.Duration, timed bool) (bool, string) {
	if d.faults.heartbeatDown {
		return true, "heartbeat failure"
	}
	if d.faults.resetting {
		if !timed || now < d.faults.downUntil {
			return true, fmt.Sprintf("resetting until %v", d.faults.downUntil)
		}
		d.faults.resetting = false
	}
	return false, ""
}

// heldByFault is how many instances the instance_exhaustion fault holds.
func (d *Device) heldByFault() int {
	if d.faults.holdAll {
		return len(d.qps)
	}
	return min(d.faults.heldInstances, len(d.qps))
}

// hangInFlight marks every request in flight as hung: it will not
// complete while the fault lasts.
func (d *Device) hangInFlight() {
	for _, q := range d.qps {
		for i := 0; i < q.n; i++ {
			e := q.at(i)
			if !e.hung && !e.failed {
				e.hung = true
				d.counters.HungRequests++
			}
		}
	}
}

// failHung completes hung requests with an error, dequeuable at once.
func (d *Device) failHung() {
	for _, q := range d.qps {
		for i := 0; i < q.n; i++ {
			e := q.at(i)
			if e.hung {
				e.hung, e.failed, e.done = false, true, 0
				setError(e.op, "engine hang: request timed out")
				d.counters.Errors.Hang++
			}
		}
	}
}

// failInFlight fails every request not yet complete at time at; they
// become dequeuable at that time.
func (d *Device) failInFlight(at time.Duration, reason string, counter *uint64) {
	for _, q := range d.qps {
		for i := 0; i < q.n; i++ {
			e := q.at(i)
			if e.failed || (!e.hung && e.done <= at && d.svc.timed(q.owner)) {
				continue
			}
			e.hung, e.failed, e.done = false, true, at
			setError(e.op, reason)
			*counter++
		}
		q.inflater.reset()
		q.streamOpen = [2]bool{}
	}
}

// setError marks an op as failed with a reason.
func setError(op *hw.CompOp, reason string) {
	op.Status = hw.StatusError
	op.Consumed, op.Produced = 0, 0
	op.Debug = reason
}
