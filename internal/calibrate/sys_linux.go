package calibrate

import (
	"fmt"
	"runtime"
	"sync/atomic"
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
			return onMeasureCPU(func() (Sample, error) {
				v, _, err := timeBatches(budgetFor(scale), threadClock, func(n int) (float64, error) {
					for range n {
						unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
					}
					return float64(n), nil
				})
				return Sample{Value: v}, err
			})
		}}
}

// epollReady is epoll_wait(2) with a zero timeout on an epoll set of 64
// eventfds of which ready are readable (level-triggered, so they stay
// ready), returning ready events per call.
func epollReady(ready int) Bench {
	return Bench{Name: fmt.Sprintf("epoll_wait_%d", ready), Unit: "ns/call",
		What: fmt.Sprintf("epoll_pwait(2), timeout 0, on 64 eventfds of which %d are ready (level-triggered), thread CPU time per call", ready),
		Run: func(scale float64) (Sample, error) {
			return onMeasureCPU(func() (Sample, error) { return epollRun(ready, budgetFor(scale)) })
		}}
}

func epollRun(ready int, b budget) (Sample, error) {
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
	v, _, err := timeBatches(b, threadClock, func(n int) (float64, error) {
		for range n {
			got, _, _ := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), 64, 0, 0, 0)
			if int(got) != ready {
				return 0, fmt.Errorf("epoll_pwait returned %d events, want %d", int(got), ready)
			}
		}
		return float64(n), nil
	})
	return Sample{Value: v}, err
}

// futexWake is FUTEX_WAKE on a word nobody waits on: the futex call's
// own price (hash the address, find no waiter) with its entry and exit.
func futexWake() Bench {
	return Bench{Name: "futex_wake", Unit: "ns/call",
		What: "futex(2) FUTEX_WAKE_PRIVATE with no waiter by raw syscall, thread CPU time per call",
		Run: func(scale float64) (Sample, error) {
			return onMeasureCPU(func() (Sample, error) {
				var word uint32
				v, _, err := timeBatches(budgetFor(scale), threadClock, func(n int) (float64, error) {
					for range n {
						unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWakePrivate, 1, 0, 0, 0)
					}
					return float64(n), nil
				})
				runtime.KeepAlive(&word)
				return Sample{Value: v}, err
			})
		}}
}

// futexPingPong is two threads handing a turn back and forth through a
// futex word, each sleeping in FUTEX_WAIT until the other wakes it:
// every hand-off is a futex wake, a wake-up and a context switch.
// sameCPU pins both threads on one CPU (the woken thread runs when the
// waker sleeps: a switch with no IPI), and the figure is the two
// threads' CPU time per hand-off (on a quiet machine, the wall time:
// one of them always runs); otherwise they are on two CPUs (the wake-up
// crosses CPUs with an IPI and the other CPU leaves idle), and the
// figure is the wall time of half a round trip. lmbench lat_ctx's shape
// with futexes instead of pipes (Tsuna's timectxsw.c).
func futexPingPong(sameCPU bool) Bench {
	name, where, clockWhat := "futex_pingpong_cross_cpu", "on two CPUs", "wall time"
	if sameCPU {
		name, where, clockWhat = "futex_pingpong_same_cpu", "on one CPU", "both threads' CPU time"
	}
	return Bench{Name: name, Unit: "ns/handoff",
		What: "two threads pinned " + where + " (sched_setaffinity) handing a turn over by FUTEX_WAIT/FUTEX_WAKE, " + clockWhat + " per half round trip",
		Run: func(scale float64) (Sample, error) {
			a, b, err := cpuPair()
			if err != nil {
				return Sample{}, err
			}
			if sameCPU {
				b = a
			} else if a == b {
				return Sample{}, errSkip("only one CPU is allowed to this process")
			}
			return pingPong(a, b, budgetFor(scale))
		}}
}

// pingPong hands the turn back and forth between a thread on CPU a (the
// measuring one) and one on CPU b, in timed batches, and returns the
// wall time per hand-off (half a round trip).
func pingPong(a, b int, bud budget) (Sample, error) {
	var turn futexTurn // 0: a's turn, 1: b's, 2: stop
	wait, give := turn.wait, turn.give
	bReady := make(chan error, 1)
	bDone := make(chan struct{})
	var bTid int
	go func() {
		defer close(bDone)
		if err := pinThread(b); err != nil {
			bReady <- err
			return
		}
		bTid = unix.Gettid()
		bReady <- nil
		for {
			wait(0)
			if turn.v.Load() == 2 {
				return
			}
			give(0)
		}
	}()
	if err := <-bReady; err != nil {
		<-bDone
		return Sample{}, err
	}
	// On one CPU the two threads' CPU time is the hand-offs' cost;
	// across CPUs the point is the wait for the other CPU, so wall time.
	clk := wallClock()
	if a == b {
		clk = pairClock(bTid)
	}
	s, err := onPinned(a, func() (Sample, error) {
		v, _, err := timeBatches(bud, clk, func(n int) (float64, error) {
			for range n {
				give(1)
				wait(1)
			}
			return float64(2 * n), nil
		})
		return Sample{Value: v}, err
	})
	give(2)
	<-bDone
	return s, err
}

// schedYield is two threads pinned to one CPU calling sched_yield(2) in
// turn: each call switches to the other thread, with no wake-up (both
// stay runnable) and no futex, so half the time per round is one
// system call and one context switch (Tsuna's timetctxsw2.c); the
// figure is the two threads' CPU time, which on a quiet machine is the
// wall time (one of them always runs). The
// benchmark checks, by the thread's switch counts (getrusage
// RUSAGE_THREAD), that the calls did switch.
func schedYield() Bench {
	return Bench{Name: "sched_yield_same_cpu", Unit: "ns/switch",
		What: "two threads pinned on one CPU (sched_setaffinity) calling sched_yield(2) in turn, both threads' CPU time per yield (one system call and one switch)",
		Run: func(scale float64) (Sample, error) {
			cpu, _, err := cpuPair()
			if err != nil {
				return Sample{}, err
			}
			return yieldPair(cpu, budgetFor(scale))
		}}
}

// minSwitchesPerYield is the share of sched_yield calls that must have
// switched for the figure to be a switch's.
const minSwitchesPerYield = 0.9

func yieldPair(cpu int, bud budget) (Sample, error) {
	var stop atomic.Bool
	ready := make(chan error, 1)
	done := make(chan struct{})
	var tid int
	go func() {
		defer close(done)
		if err := pinThread(cpu); err != nil {
			ready <- err
			return
		}
		tid = unix.Gettid()
		ready <- nil
		for !stop.Load() {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
		}
	}()
	if err := <-ready; err != nil {
		<-done
		return Sample{}, err
	}
	s, err := onPinned(cpu, func() (Sample, error) {
		sw0, err := threadSwitches()
		if err != nil {
			return Sample{}, err
		}
		yields := 0
		v, _, err := timeBatches(bud, pairClock(tid), func(n int) (float64, error) {
			for range n {
				unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			}
			yields += n
			// Each of this thread's yields runs the other thread's
			// yield before it returns: two switches.
			return float64(2 * n), nil
		})
		if err != nil {
			return Sample{}, err
		}
		sw1, err := threadSwitches()
		if err != nil {
			return Sample{}, err
		}
		per := float64(sw1-sw0) / float64(max(1, yields))
		if per < minSwitchesPerYield {
			return Sample{}, errSkip(fmt.Sprintf("sched_yield switched on %.0f%% of calls (below %.0f%%): this scheduler does not hand the CPU to the other thread", 100*per, 100*minSwitchesPerYield))
		}
		return Sample{Value: v, Extra: map[string]float64{"switches_per_yield": per}}, nil
	})
	stop.Store(true)
	<-done
	return s, err
}

// futexTurn is a word two threads hand back and forth with FUTEX_WAIT and
// FUTEX_WAKE, the hand-off the ping-pong benchmarks time.
type futexTurn struct{ v atomic.Uint32 }

// wait sleeps while the turn is still old.
func (t *futexTurn) wait(old uint32) {
	addr := uintptr(unsafe.Pointer(&t.v))
	for t.v.Load() == old {
		unix.Syscall6(unix.SYS_FUTEX, addr, futexWaitPrivate, uintptr(old), 0, 0, 0)
	}
}

// give sets the turn to v and wakes the other thread.
func (t *futexTurn) give(v uint32) {
	t.v.Store(v)
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&t.v)), futexWakePrivate, 1, 0, 0, 0)
}
