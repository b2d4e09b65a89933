package calibrate

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// tailBenches are the benchmarks that time each iteration, so that the
// variability of the kernel's round trip and of a thread hand-off is
// measured and not only their means (registered in Standard).
func tailBenches() []Bench {
	return []Bench{tcpRRTail(), futexHandoffTail(true), futexHandoffTail(false)}
}

// tcpRRTail is tcp_rr_loopback with each round trip timed: its figure is
// the standard deviation of the round trips, with their mean and p99.
func tcpRRTail() Bench {
	return Bench{Name: "tcp_rr_tail", Unit: "ns/round trip (standard deviation)",
		What: fmt.Sprintf("%d-byte request and response over TCP on 127.0.0.1, blocking sockets, TCP_NODELAY, two threads, each round trip timed (wall clock): their standard deviation", rrMessage),
		Run: func(scale float64) (Sample, error) {
			c, s, err := tcpPair()
			if err != nil {
				return Sample{}, err
			}
			defer unix.Close(c)
			defer unix.Close(s)
			n := connIters(20_000, scale)
			ts, err := timedRoundTrips(c, s, n)
			if err != nil {
				return Sample{}, err
			}
			return tailSample(ts, 1), nil
		}}
}

// timedRoundTrips is roundTrips with each of the n round trips timed.
func timedRoundTrips(c, s, n int) ([]float64, error) {
	const warm = 1000
	srvErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		buf := make([]byte, rrMessage)
		for range warm + n {
			if err := readFull(s, buf); err != nil {
				srvErr <- err
				return
			}
			if err := writeFull(s, buf); err != nil {
				srvErr <- err
				return
			}
		}
		srvErr <- nil
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, rrMessage)
	ts := make([]float64, 0, n)
	for i := range warm + n {
		t0 := time.Now()
		if err := writeFull(c, buf); err != nil {
			return nil, err
		}
		if err := readFull(c, buf); err != nil {
			return nil, err
		}
		if i >= warm {
			ts = append(ts, float64(time.Since(t0)))
		}
	}
	return ts, <-srvErr
}

// futexHandoffTail times each round trip of futex_pingpong's hand-off (a
// turn to the other thread and back): its figure is the standard
// deviation of one hand-off, the round trip's over the square root of 2
// (two independent hand-offs), with the mean hand-off and the p99.
func futexHandoffTail(sameCPU bool) Bench {
	name, where := "futex_handoff_tail_cross_cpu", "on two CPUs"
	if sameCPU {
		name, where = "futex_handoff_tail_same_cpu", "on one CPU"
	}
	return Bench{Name: name, Unit: "ns/handoff (standard deviation)",
		What: "two threads pinned " + where + " handing a turn over by FUTEX_WAIT/FUTEX_WAKE, each round trip timed (wall clock): the standard deviation of one hand-off",
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
			ts, err := timedPingPong(a, b, connIters(50_000, scale))
			if err != nil {
				return Sample{}, err
			}
			return tailSample(ts, 2), nil
		}}
}

// timedPingPong is pingPong with each of the n round trips timed.
func timedPingPong(a, b, n int) ([]float64, error) {
	const warm = 1000
	var turn futexTurn // 0: a's turn, 1: b's, 2: stop
	wait, give := turn.wait, turn.give
	bReady := make(chan error, 1)
	go func() {
		if err := pinThread(b); err != nil {
			bReady <- err
			return
		}
		bReady <- nil
		for range warm + n {
			wait(0)
			if turn.v.Load() == 2 {
				return
			}
			give(0)
		}
	}()
	type result struct {
		ts  []float64
		err error
	}
	out := make(chan result, 1)
	go func() {
		err := pinThread(a)
		if berr := <-bReady; berr != nil {
			err = berr
		} else if err != nil {
			give(2)
		}
		if err != nil {
			out <- result{err: err}
			return
		}
		ts := make([]float64, 0, n)
		for i := range warm + n {
			t0 := time.Now()
			give(1)
			wait(1)
			if i >= warm {
				ts = append(ts, float64(time.Since(t0)))
			}
		}
		out <- result{ts: ts}
	}()
	r := <-out
	return r.ts, r.err
}
