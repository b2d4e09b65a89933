package rt

import (
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Meter is the real-time hw.Meter (architecture invariant 4): Now is the
// monotonic time since the runtime started and Charge only counts. Only
// its lcore charges it. Charges accumulate in plain lcore-local counters
// (an atomic add per charge, several per packet, cost 7% of a bulk
// transfer's CPU) and Publish, which the lcore calls once per poll-loop
// turn, adds them to the counters Count reads from any goroutine: counts
// lag by at most one turn.
type Meter struct {
	start  time.Time
	local  [hw.NumCostOps]int64
	marked [hw.NumCostOps]bool
	dirty  []hw.CostOp
	counts [hw.NumCostOps]atomic.Int64
	idled  atomic.Int64
}

// NewMeter returns a meter whose clock starts at start (a time.Time read
// from the monotonic clock, e.g. time.Now()).
func NewMeter(start time.Time) *Meter {
	return &Meter{start: start, dirty: make([]hw.CostOp, 0, hw.NumCostOps)}
}

// Now implements hw.Meter.
func (m *Meter) Now() time.Duration { return time.Since(m.start) }

// Charge implements hw.Meter: it only counts (lcore only; see Publish).
func (m *Meter) Charge(op hw.CostOp, count int64) {
	if int(op) >= hw.NumCostOps || op < 0 {
		return
	}
	if !m.marked[op] {
		m.marked[op] = true
		m.dirty = append(m.dirty, op)
	}
	m.local[op] += count
}

// Publish makes the charges since the last Publish visible to Count
// (lcore only).
func (m *Meter) Publish() {
	for _, op := range m.dirty {
		m.counts[op].Add(m.local[op])
		m.local[op] = 0
		m.marked[op] = false
	}
	m.dirty = m.dirty[:0]
}

// Idle implements hw.Meter: real time passes by itself; the time is
// recorded.
func (m *Meter) Idle(d time.Duration) { m.idled.Add(int64(d)) }

// Count returns how many units of op were charged up to the last
// Publish. Safe from any goroutine.
func (m *Meter) Count(op hw.CostOp) int64 {
	if int(op) >= hw.NumCostOps || op < 0 {
		return 0
	}
	return m.counts[op].Load()
}

var _ hw.Meter = (*Meter)(nil)
