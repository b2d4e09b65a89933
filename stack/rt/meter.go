package rt

import (
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Meter is the real-time hw.Meter (architecture invariant 4): Now is the
// monotonic time since the runtime started and Charge only counts. Only
// its lcore writes it; Counts may be read from any goroutine.
type Meter struct {
	start  time.Time
	counts [hw.NumCostOps]atomic.Int64
	idled  atomic.Int64
}

// NewMeter returns a meter whose clock starts at start (a time.Time read
// from the monotonic clock, e.g. time.Now()).
func NewMeter(start time.Time) *Meter { return &Meter{start: start} }

// Now implements hw.Meter.
func (m *Meter) Now() time.Duration { return time.Since(m.start) }

// Charge implements hw.Meter: it only counts.
func (m *Meter) Charge(op hw.CostOp, count int64) {
	if int(op) < hw.NumCostOps {
		m.counts[op].Add(count)
	}
}

// Idle implements hw.Meter: real time passes by itself; the time is
// recorded.
func (m *Meter) Idle(d time.Duration) { m.idled.Add(int64(d)) }

// Count returns how many units of op were charged.
func (m *Meter) Count(op hw.CostOp) int64 {
	if int(op) >= hw.NumCostOps {
		return 0
	}
	return m.counts[op].Load()
}

var _ hw.Meter = (*Meter)(nil)
