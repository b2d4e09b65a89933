package calibrate

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"
)

// Options configure a calibration.
type Options struct {
	// Runs is how many times each benchmark runs (default DefaultRuns).
	Runs int
	// Quick shortens every run to a fifth of its time.
	Quick bool
	// Force measures and writes on a busy machine, marking every price
	// noisy, instead of refusing.
	Force bool
	// Benches are the benchmarks (nil: Standard()).
	Benches []Bench
	// Probe reads the machine's load (nil: ProcProbe of /proc).
	Probe Probe
	// Rule is the noise rule (zero: DefaultRule()).
	Rule Rule
	// Machine describes the machine (zero: ThisMachine).
	Machine Machine
	// Log receives a line per benchmark and run (nil: nothing).
	Log io.Writer
}

// Result is a calibration's measurements and the machine's state.
type Result struct {
	Machine Machine
	Runs    int
	Quick   bool
	Rule    Rule
	// Before and After are the probe's samples around the benchmarks.
	Before, After LoadSample
	// Busy are the reasons the machine was found too busy (before or
	// after), when --force wrote the file anyway.
	Busy []string
	// Measurements in the order the benchmarks were given.
	Measurements []*Measurement
	// Elapsed is the calibration's wall time.
	Elapsed time.Duration
}

// Get returns the measurement of the named benchmark when it ran (nil
// when it was skipped or is unknown).
func (r *Result) Get(name string) *Measurement {
	for _, m := range r.Measurements {
		if m.Bench.Name == name && m.Skipped == "" {
			return m
		}
	}
	return nil
}

// Forced reports whether the machine was busy and the file is written
// anyway.
func (r *Result) Forced() bool { return len(r.Busy) > 0 }

// Run measures: it checks the machine's load, runs every benchmark
// Options.Runs times round-robin, checks the load again, and marks
// noisy figures. On a busy machine it returns a *BusyError unless
// Options.Force.
func Run(o Options) (*Result, error) {
	started := time.Now()
	if o.Runs == 0 {
		o.Runs = DefaultRuns
	}
	if o.Runs < 1 {
		return nil, fmt.Errorf("runs: %d; give 1 or more", o.Runs)
	}
	if o.Benches == nil {
		o.Benches = Standard()
	}
	if o.Probe == nil {
		o.Probe = ProcProbe{Window: 500 * time.Millisecond, Loop: 100 * time.Millisecond}
	}
	if o.Rule == (Rule{}) {
		o.Rule = DefaultRule()
	}
	if o.Machine == (Machine{}) {
		o.Machine = ThisMachine(time.Now())
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	r := &Result{Machine: o.Machine, Runs: o.Runs, Quick: o.Quick, Rule: o.Rule}
	var err error
	if r.Before, err = o.Probe.Sample(); err != nil {
		return nil, fmt.Errorf("machine load before the benchmarks: %w", err)
	}
	fmt.Fprintf(log, "calibrate: before: %s\n", r.Before)
	if why := o.Rule.Busy(r.Before, true); len(why) > 0 {
		if !o.Force {
			return nil, &BusyError{When: "before", Reasons: why}
		}
		r.Busy = append(r.Busy, prefix("before: ", why)...)
	}
	scale := 1.0
	if o.Quick {
		scale = 0.2
	}
	samples := make([][]Sample, len(o.Benches))
	for _, b := range o.Benches {
		r.Measurements = append(r.Measurements, &Measurement{Bench: b})
	}
	for run := range o.Runs {
		for i, b := range o.Benches {
			m := r.Measurements[i]
			if m.Skipped != "" {
				continue
			}
			t0 := time.Now()
			s, err := runWithoutGC(b, scale)
			m.Elapsed += time.Since(t0)
			var skip errSkip
			switch {
			case errors.As(err, &skip):
				m.Skipped = skip.Error()
			case err != nil:
				m.Skipped = "failed: " + err.Error()
			default:
				samples[i] = append(samples[i], s)
				fmt.Fprintf(log, "calibrate: run %d/%d: %-26s %s %s\n", run+1, o.Runs, b.Name, num(s.Value), b.Unit)
				continue
			}
			fmt.Fprintf(log, "calibrate: %s skipped: %s\n", b.Name, m.Skipped)
		}
	}
	if r.After, err = o.Probe.Sample(); err != nil {
		return nil, fmt.Errorf("machine load after the benchmarks: %w", err)
	}
	fmt.Fprintf(log, "calibrate: after: %s\n", r.After)
	if why := o.Rule.Busy(r.After, false); len(why) > 0 {
		if !o.Force {
			return nil, &BusyError{When: "after", Reasons: why}
		}
		r.Busy = append(r.Busy, prefix("after: ", why)...)
	}
	for i, m := range r.Measurements {
		if m.Skipped != "" {
			continue
		}
		vals := make([]float64, len(samples[i]))
		extra := map[string]float64{}
		for j, s := range samples[i] {
			vals[j] = s.Value
			for k, v := range s.Extra {
				extra[k] += v / float64(len(samples[i]))
			}
		}
		if m.Summary, err = Summarize(vals); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Bench.Name, err)
		}
		m.Extra = extra
		m.Noisy = o.Rule.Noisy(m.Summary) || r.Forced()
	}
	r.Elapsed = time.Since(started)
	return r, nil
}

// DefaultRuns is how many runs of each benchmark simrun calibrate takes:
// enough for the quartiles the noise rule reads to leave out the two
// most extreme runs on each side.
const DefaultRuns = 9

// runWithoutGC runs one run of b with Go's garbage collector stopped
// (after a collection, so that the run starts with a clean heap, and
// restored after it): a collection's mark phase takes CPU from the
// timed thread and evicts its caches, at times no benchmark controls.
func runWithoutGC(b Bench, scale float64) (Sample, error) {
	runtime.GC()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	return b.Run(scale)
}

func prefix(p string, s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = p + x
	}
	return out
}

// Standard is the benchmarks simrun calibrate runs, in order.
func Standard() []Bench {
	b := []Bench{nullSyscall()}
	for _, k := range EpollPoints() {
		b = append(b, epollReady(k))
	}
	b = append(b, epollCtlAE(), futexWake(), schedYield(), futexPingPong(true), futexPingPong(false))
	for _, size := range []int{64, 1500, 64 << 10} {
		b = append(b, memcpy(size))
	}
	b = append(b, internetChecksum(), tcpRR(), pipeRR())
	for _, l := range []int{1, 6, 9} {
		b = append(b, deflateLevel(l))
	}
	if cZlibStatus() == "" {
		for _, l := range []int{1, 6, 9} {
			b = append(b, cZlibDeflate(l))
		}
	}
	b = append(b, connScaleBenches()...) // KM: connscale_linux.go
	b = append(b, tailBenches()...)      // KM: tails_linux.go
	return append(b, inflateBench(), crc32IEEE(), stackPerPacket())
}

// EpollPoints are the numbers of ready descriptors epoll_wait is
// measured at.
func EpollPoints() []int { return []int{0, 1, 16, 64} }
