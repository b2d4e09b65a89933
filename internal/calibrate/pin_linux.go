package calibrate

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// cpuPair is the CPU a benchmark's measuring thread runs on and the one
// its partner thread (the other end of a cross-CPU ping-pong or round
// trip) runs on: the last CPU the process may use, which takes fewer of
// the machine's interrupts than CPU 0 on most systems, and the first
// other one. On a one-CPU process both are that CPU.
func cpuPair() (measure, partner int, err error) {
	cpus, err := allowedCPUs()
	if err != nil {
		return 0, 0, err
	}
	measure = cpus[len(cpus)-1]
	partner = cpus[0]
	return measure, partner, nil
}

// onPinned runs f on a new goroutine locked to its own OS thread, that
// thread pinned to cpu (sched_setaffinity), and returns what f returned.
// The goroutine ends without unlocking, so that Go retires the pinned
// thread instead of handing it to other goroutines.
func onPinned(cpu int, f func() (Sample, error)) (Sample, error) {
	type result struct {
		s   Sample
		err error
	}
	out := make(chan result, 1)
	go func() {
		if err := pinThread(cpu); err != nil {
			out <- result{err: err}
			return
		}
		s, err := f()
		out <- result{s, err}
	}()
	r := <-out
	return r.s, r.err
}

// onMeasureCPU runs f pinned to the measuring CPU (cpuPair).
func onMeasureCPU(f func() (Sample, error)) (Sample, error) {
	cpu, _, err := cpuPair()
	if err != nil {
		return Sample{}, err
	}
	return onPinned(cpu, f)
}

// pinThread locks the goroutine to its OS thread and that thread to
// cpu. The goroutine must end without unlocking, so that Go retires the
// pinned thread instead of reusing it.
func pinThread(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return errSkip(fmt.Sprintf("sched_setaffinity to CPU %d: %v", cpu, err))
	}
	return nil
}

// allowedCPUs lists the CPUs the calling thread may run on.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("sched_getaffinity: no CPU")
	}
	return cpus, nil
}

// threadSwitches is the calling thread's voluntary and involuntary
// context switches so far (getrusage(RUSAGE_THREAD) ru_nvcsw + ru_nivcsw).
func threadSwitches() (int64, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, fmt.Errorf("getrusage(RUSAGE_THREAD): %w", err)
	}
	return ru.Nvcsw + ru.Nivcsw, nil
}

// threadCPUOf is the CPU time of the thread tid of this process, by the
// clock clock_gettime gives for another thread (pthread_getcpuclockid's:
// the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED),
// include/linux/posix-timers.h).
func threadCPUOf(tid int) (time.Duration, error) {
	const perThread, sched = 4, 2
	id := int32(^uint32(tid)<<3) | perThread | sched
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		return 0, fmt.Errorf("CPU clock of thread %d: %w", tid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// pairClock is the CPU time of the calling thread and of thread tid
// together: for two threads that take turns on one CPU, what their turns
// cost, without the time other processes took on that CPU in between
// (which a wall clock would count).
func pairClock(tid int) clock {
	return func() (time.Duration, error) {
		a, err := threadCPU()
		if err != nil {
			return 0, err
		}
		b, err := threadCPUOf(tid)
		return a + b, err
	}
}
