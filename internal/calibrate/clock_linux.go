package calibrate

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time, user and system
// (CLOCK_THREAD_CPUTIME_ID, the clock getrusage(RUSAGE_THREAD) reads, at
// nanosecond resolution). The caller must hold its OS thread
// (runtime.LockOSThread) between two readings.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("thread CPU clock: %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
