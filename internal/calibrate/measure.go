package calibrate

import (
	"fmt"
	"slices"
	"time"
)

// How long one run of a benchmark lasts, and in how many timed batches.
// A run is sized by time, not by an iteration count, so that a cheap
// call and a slow compression level are measured over the same stretch
// of the machine's life (Google Benchmark's --benchmark_min_time and
// criterion's measurement_time do the same): the iteration count of a
// batch grows until one batch lasts batchTime (those sizing batches are
// the warm-up, and are not counted), and then batches run until the run
// has lasted runTime and at least minBatches were timed. The run's
// figure is the median of its batches' figures, so a burst of load that
// hits one batch (an interrupt storm, the host preempting the vCPU)
// moves the run's figure no more than a batch does.
const (
	runTime    = 200 * time.Millisecond
	batchTime  = 20 * time.Millisecond
	minBatches = 5
	// maxBatchIters bounds the sizing of a batch whose body does nothing
	// measurable, so that sizing ends.
	maxBatchIters = 1 << 34
)

// budget is one run's time: full, or scaled down by --quick.
type budget struct {
	run, batch time.Duration
}

// budgetFor scales a full run's time (1 for a full run, 0.2 for --quick).
func budgetFor(scale float64) budget {
	if scale <= 0 || scale > 1 {
		scale = 1
	}
	return budget{run: time.Duration(float64(runTime) * scale), batch: time.Duration(float64(batchTime) * scale)}
}

// clock reads the time a batch is timed by.
type clock func() (time.Duration, error)

// threadClock is the calling thread's CPU time: time the thread waited
// for a CPU does not count. For single-threaded work.
func threadClock() (time.Duration, error) { return threadCPU() }

// wallClock returns a monotonic elapsed-time clock, for benchmarks whose
// point is waiting for another CPU (a cross-CPU ping-pong, a round
// trip).
func wallClock() clock {
	start := time.Now()
	return func() (time.Duration, error) { return time.Since(start), nil }
}

// batchFunc does n iterations of a benchmark's body and returns how many
// units of its figure they did (calls, bytes, packets, hand-offs).
type batchFunc func(n int) (units float64, err error)

// batch is one timed batch's figure and size.
type batch struct {
	ns    float64
	units float64
}

// timeBatches sizes and times batches of f on the calling thread (which
// the caller has locked and pinned) and returns the median batch's
// figure in ns per unit, and the units all timed batches did.
func timeBatches(b budget, clk clock, f batchFunc) (perUnit, units float64, err error) {
	n := 1
	for {
		d, _, err := timeOnce(clk, n, f)
		if err != nil {
			return 0, 0, err
		}
		if d >= b.batch || n >= maxBatchIters {
			break
		}
		next := n * 10
		if d > 0 {
			// Aim a little past the batch time, so that sizing ends in
			// one or two more steps.
			next = int(float64(n) * 1.2 * float64(b.batch) / float64(d))
		}
		n = min(max(next, n+1), n*100, maxBatchIters)
	}
	var got []batch
	start := time.Now()
	for len(got) < minBatches || time.Since(start) < b.run {
		d, u, err := timeOnce(clk, n, f)
		if err != nil {
			return 0, 0, err
		}
		if u <= 0 {
			return 0, 0, fmt.Errorf("a batch of %d iterations did no work", n)
		}
		got = append(got, batch{ns: float64(d), units: u})
	}
	per := make([]float64, len(got))
	for i, g := range got {
		per[i] = g.ns / g.units
		units += g.units
	}
	slices.Sort(per)
	return quantile(per, 0.5), units, nil
}

// timeOnce times one batch of n iterations.
func timeOnce(clk clock, n int, f batchFunc) (time.Duration, float64, error) {
	t0, err := clk()
	if err != nil {
		return 0, 0, err
	}
	u, err := f(n)
	if err != nil {
		return 0, 0, err
	}
	t1, err := clk()
	if err != nil {
		return 0, 0, err
	}
	return t1 - t0, u, nil
}
