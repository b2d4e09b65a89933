package calibrate

import (
	"fmt"
	"strconv"
	"strings"
)

// LoadSample is the state of the machine before or after the
// benchmarks, read while calibrate itself is idle.
type LoadSample struct {
	// Load1 is the one-minute load average (/proc/loadavg).
	Load1 float64
	// CPUs is the number of CPUs.
	CPUs int
	// Others is the share of the machine's CPU time (0..1) that was not
	// idle during the probe's window, in which calibrate sleeps: the
	// work of other processes (/proc/stat, all CPUs).
	Others float64
	// Steal is the share of the window's CPU time the hypervisor gave
	// to other guests (/proc/stat steal).
	Steal float64
	// WallPerCPU is the wall time of a pure compute loop divided by the
	// CPU time its thread got: 1 when nothing else wanted that CPU,
	// above 1 when the thread waited for it.
	WallPerCPU float64
}

// String is the sample as the file's description quotes it.
func (s LoadSample) String() string {
	return fmt.Sprintf("load %.2f on %d CPUs, others %.0f%% of CPU time, steal %.1f%%, compute loop wall/CPU %.2f",
		s.Load1, s.CPUs, 100*s.Others, 100*s.Steal, s.WallPerCPU)
}

// Rule decides when figures are noisy and when the machine is too busy
// to measure. docs/calibration.md states it.
type Rule struct {
	// MaxSpread marks a price noisy when its runs' robust relative
	// spread (Summary.Spread: interquartile range over median) is above
	// it.
	MaxSpread float64
	// MaxLoadPerCPU refuses when the one-minute load average per CPU is
	// above it before the benchmarks start. It is not checked after
	// them: the average then counts calibrate's own runs.
	MaxLoadPerCPU float64
	// MaxOthers refuses when other processes used more than this share
	// of the machine's CPU time during a probe window.
	MaxOthers float64
	// MaxSteal refuses when the hypervisor stole more than this share.
	MaxSteal float64
	// MaxWallPerCPU refuses when the compute loop's wall time exceeds
	// its CPU time by more than this factor.
	MaxWallPerCPU float64
}

// DefaultRule is the rule simrun calibrate applies.
func DefaultRule() Rule {
	return Rule{MaxSpread: 0.05, MaxLoadPerCPU: 0.5, MaxOthers: 0.25, MaxSteal: 0.02, MaxWallPerCPU: 1.10}
}

// Busy returns why the machine is too busy for stable figures (nil when
// it is not); before says the sample was taken before the benchmarks.
func (r Rule) Busy(s LoadSample, before bool) []string {
	var why []string
	if before && s.CPUs > 0 && s.Load1/float64(s.CPUs) > r.MaxLoadPerCPU {
		why = append(why, fmt.Sprintf("load average %.2f is above %.2f per CPU on %d CPUs", s.Load1, r.MaxLoadPerCPU, s.CPUs))
	}
	if s.Others > r.MaxOthers {
		why = append(why, fmt.Sprintf("other processes used %.0f%% of the CPU time (limit %.0f%%)", 100*s.Others, 100*r.MaxOthers))
	}
	if s.Steal > r.MaxSteal {
		why = append(why, fmt.Sprintf("the hypervisor stole %.1f%% of the CPU time (limit %.1f%%)", 100*s.Steal, 100*r.MaxSteal))
	}
	if s.WallPerCPU > r.MaxWallPerCPU {
		why = append(why, fmt.Sprintf("a compute loop took %.2f× its CPU time in wall time (limit %.2f×): its thread waited for a CPU", s.WallPerCPU, r.MaxWallPerCPU))
	}
	return why
}

// Noisy reports whether a benchmark's runs spread more than the rule
// allows.
func (r Rule) Noisy(s Summary) bool { return s.Spread() > r.MaxSpread }

// Probe reads the machine's load; the real one reads /proc, specs give
// their own.
type Probe interface {
	Sample() (LoadSample, error)
}

// BusyError is the refusal to calibrate on a busy machine.
type BusyError struct {
	// When is "before" or "after" the benchmarks.
	When    string
	Reasons []string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("the machine is too busy for stable figures (%s the benchmarks): %s; run again on a quieter machine, or give --force to write the file marked noisy",
		e.When, strings.Join(e.Reasons, "; "))
}

// cpuTimes are /proc/stat's first line's jiffies.
type cpuTimes struct{ total, idle, steal uint64 }

// parseStat reads /proc/stat's text.
func parseStat(data []byte) (cpuTimes, error) {
	var err error
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat: first line %q is not the cpu line", line)
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat: field %d: %w", i+1, err)
		}
	}
	var t cpuTimes
	for _, x := range v {
		t.total += x
	}
	t.idle = v[3] + v[4] // idle and iowait
	t.steal = v[7]
	return t, nil
}
