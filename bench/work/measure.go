// Package work holds the workloads: functions that take any netw.Network
// and measure one thing through net.Listener and net.Conn alone, so the
// application code is identical for every network.
package work

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is a process's CPU time and peak memory at one moment.
type Usage struct {
	Wall   time.Time
	User   time.Duration
	System time.Duration
	// MaxRSS is ru_maxrss: the process's peak resident set, bytes.
	MaxRSS int64
}

// ReadUsage reads getrusage(RUSAGE_SELF): every thread of the process,
// so both stacks, their pumps or lcores, and the application goroutines.
func ReadUsage() Usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return Usage{
		Wall:   time.Now(),
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
		MaxRSS: ru.Maxrss * 1024, // kilobytes on Linux
	}
}

// Span is what happened between two readings.
type Span struct {
	Wall time.Duration `json:"wall_ns"`
	CPU  time.Duration `json:"cpu_ns"`
	User time.Duration `json:"user_ns"`
	Sys  time.Duration `json:"sys_ns"`
}

// Since returns the span from u to now.
func (u Usage) Since() Span {
	v := ReadUsage()
	return Span{Wall: v.Wall.Sub(u.Wall), CPU: v.User + v.System - u.User - u.System,
		User: v.User - u.User, Sys: v.System - u.System}
}

// Memory reads VmRSS and VmHWM (the peak since the last ResetPeak) from
// /proc/self/status, in bytes.
func Memory() (rss, hwm int64) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &rss
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &hwm
		default:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) >= 2 {
			v, _ := strconv.ParseInt(fields[1], 10, 64)
			*dst = v * 1024
		}
	}
	return rss, hwm
}

// ResetPeak resets VmHWM to the current RSS (writing 5 to
// /proc/self/clear_refs, Linux 4.0 and later), so that the peak measured
// afterwards belongs to the workload and not to the setup. It reports
// whether the kernel took it.
func ResetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
