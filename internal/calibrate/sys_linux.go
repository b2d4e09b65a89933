package calibrate

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system-call benchmarks. The timed loops use raw system calls
// (unix.RawSyscall: no entry into Go's scheduler around the call), so
// a figure is the kernel's entry, work and exit plus a loop iteration,
// as lmbench's lat_syscall measures it; only calls that block
// (futex_wait, read, write) go through unix.Syscall, whose scheduler
// hand-off (a few tens of ns) both sides of a difference share.

// futex(2) operations (include/uapi/linux/futex.h: FUTEX_WAIT 0,
// FUTEX_WAKE 1, FUTEX_PRIVATE_FLAG 128), which x/sys/unix does not name.
const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
)

// nullSyscall is getppid(2), which does nothing but return a field of
// the task: the price of entering and leaving the kernel.
func nullSyscall() Bench {
	return Bench{Name: "getppid", Unit: "ns/call",
		What: "getppid(2) by raw syscall in a loop, thread CPU time per call",
		Run: func(scale float64) (Sample, error) {
			v, err := perCall(iters(2_000_000, scale), func() { unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0) })
			return Sample{Value: v}, err
		}}
}

// epollReady is epoll_wait(2) with a zero timeout on an epoll set of 64
// eventfds of which ready are readable (level-triggered, so they stay
// ready), returning ready events per call.
func epollReady(ready int) Bench {
	return Bench{Name: fmt.Sprintf("epoll_wait_%d", ready), Unit: "ns/call",
		What: fmt.Sprintf("epoll_pwait(2), timeout 0, on 64 eventfds of which %d are ready (level-triggered), thread CPU time per call", ready),
		Run: func(scale float64) (Sample, error) {
			ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
			if err != nil {
				return Sample{}, fmt.Errorf("epoll_create1: %w", err)
			}
			defer unix.Close(ep)
			for i := range 64 {
				init := 0
				if i < ready {
					init = 1
				}
				fd, err := unix.Eventfd(uint(init), unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
				if err != nil {
					return Sample{}, fmt.Errorf("eventfd: %w", err)
				}
				defer unix.Close(fd)
				ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
				if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
					return Sample{}, fmt.Errorf("epoll_ctl: %w", err)
				}
			}
			events := make([]unix.EpollEvent, 64)
			got := 0
			v, err := perCall(iters(400_000, scale), func() {
				n, _, _ := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), 64, 0, 0, 0)
				got = int(n)
			})
			if err == nil && got != ready {
				err = fmt.Errorf("epoll_pwait returned %d events, want %d", got, ready)
			}
			return Sample{Value: v}, err
		}}
}

// futexWake is FUTEX_WAKE on a word nobody waits on: the futex call's
// own price (hash the address, find no waiter) with its entry and exit.
func futexWake() Bench {
	return Bench{Name: "futex_wake", Unit: "ns/call",
		What: "futex(2) FUTEX_WAKE_PRIVATE with no waiter by raw syscall, thread CPU time per call",
		Run: func(scale float64) (Sample, error) {
			var word uint32
			v, err := perCall(iters(1_000_000, scale), func() {
				unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWakePrivate, 1, 0, 0, 0)
			})
			runtime.KeepAlive(&word)
			return Sample{Value: v}, err
		}}
}

// futexPingPong is two threads handing a turn back and forth through a
// futex word, each sleeping in FUTEX_WAIT until the other wakes it:
// every hand-off is a wake-up and a context switch. sameCPU pins both
// threads on one CPU (the woken thread runs when the waker sleeps: a
// switch with no IPI); otherwise on two (the wake-up crosses CPUs with
// an IPI and the other CPU leaves idle). The figure is the wall time of
// half a round trip, lmbench lat_ctx's shape with futexes instead of
// pipes.
func futexPingPong(sameCPU bool) Bench {
	name, where := "futex_pingpong_cross_cpu", "on two CPUs"
	if sameCPU {
		name, where = "futex_pingpong_same_cpu", "on one CPU"
	}
	return Bench{Name: name, Unit: "ns/handoff",
		What: "two threads pinned " + where + " (sched_setaffinity) handing a turn over by FUTEX_WAIT/FUTEX_WAKE, wall time per half round trip",
		Run: func(scale float64) (Sample, error) {
			cpus, err := allowedCPUs()
			if err != nil {
				return Sample{}, err
			}
			a, b := cpus[0], cpus[0]
			if !sameCPU {
				if len(cpus) < 2 {
					return Sample{}, errSkip("only one CPU is allowed to this process")
				}
				b = cpus[1]
			}
			n := iters(50_000, scale)
			d, err := pingPong(a, b, n)
			return Sample{Value: float64(d) / float64(2*n)}, err
		}}
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

// pingPong hands the turn n times each way between a thread on CPU a
// and one on CPU b and returns the wall time of the timed part.
func pingPong(a, b, n int) (time.Duration, error) {
	const warm = 1000
	var turn atomic.Uint32 // 0: a's turn, 1: b's, 2: stop
	addr := uintptr(unsafe.Pointer(&turn))
	wait := func(old uint32) {
		for turn.Load() == old {
			unix.Syscall6(unix.SYS_FUTEX, addr, futexWaitPrivate, uintptr(old), 0, 0, 0)
		}
	}
	give := func(v uint32) {
		turn.Store(v)
		unix.RawSyscall6(unix.SYS_FUTEX, addr, futexWakePrivate, 1, 0, 0, 0)
	}
	bReady := make(chan error, 1)
	go func() {
		if err := pinThread(b); err != nil {
			bReady <- err
			return
		}
		bReady <- nil
		for range warm + n {
			wait(0)
			if turn.Load() == 2 {
				return
			}
			give(0)
		}
	}()
	type result struct {
		d   time.Duration
		err error
	}
	out := make(chan result, 1)
	go func() {
		err := pinThread(a)
		if berr := <-bReady; berr != nil {
			err = berr
		} else if err != nil {
			give(2) // b waits for a turn that will not come
		}
		if err != nil {
			out <- result{err: err}
			return
		}
		var start time.Time
		for i := range warm + n {
			if i == warm {
				start = time.Now()
			}
			give(1)
			wait(1)
		}
		out <- result{d: time.Since(start)}
	}()
	r := <-out
	return r.d, r.err
}
