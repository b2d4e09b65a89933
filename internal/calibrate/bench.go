package calibrate

import "time"

// rrMessage is the request and the response size of the round trips: a
// small message, one segment each way.
const rrMessage = 64

// Bench is one micro-benchmark. Each call of Run is one run: it sets up,
// measures and tears down, and returns the run's figure in Unit. The
// runner calls it Options.Runs times, interleaved with the other
// benchmarks (so a burst of load from a neighbour disturbs one run of
// many benchmarks, and shows as spread, rather than every run of one).
type Bench struct {
	// Name is the benchmark's key ("getppid", "epoll_wait_16").
	Name string
	// What says what one run measures and by which clock, as a price's
	// source quotes it.
	What string
	// Unit is the figure's unit ("ns/call", "ns/byte", "ns/packet").
	Unit string
	// Run measures once; scale (1 for a full run, 0.2 for --quick)
	// scales the run's time (measure.go: about 200 ms at 1).
	Run func(scale float64) (Sample, error)
}

// Sample is one run's figure and what else the run counted.
type Sample struct {
	Value float64
	// Extra are per-unit counts a mapping needs besides the figure
	// (the cost operations the stack charged per packet).
	Extra map[string]float64
}

// Measurement is what the runs of one benchmark gave.
type Measurement struct {
	Bench   Bench
	Summary Summary
	// Noisy: the runs spread more than the rule allows, or the machine
	// was busy and --force wrote the file anyway.
	Noisy bool
	// Skipped says why the benchmark could not run (empty when it ran).
	Skipped string
	// Extra are the runs' Extra values, averaged.
	Extra map[string]float64
	// Elapsed is the wall time all its runs took.
	Elapsed time.Duration
}

// sinkU64 keeps a computed value alive, so that the compiler cannot drop
// the work that made it.
//
//go:noinline
func sinkU64(uint64) {}

// errSkip marks a benchmark that cannot run here (not a failure).
type errSkip string

func (e errSkip) Error() string { return string(e) }
