package hw

import "time"

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
