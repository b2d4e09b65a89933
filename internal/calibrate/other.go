//go:build !linux

package calibrate

import (
	"errors"
	"time"
)

// The benchmarks and the probe need Linux (epoll, futex,
// sched_setaffinity, /proc, the thread CPU clock); elsewhere calibrate
// builds and refuses with this error.
var errNotLinux = errors.New("simrun calibrate measures Linux only")

func threadCPU() (time.Duration, error) { return 0, errNotLinux }

func kernelRelease() string { return "not Linux" }

// ProcProbe reads the machine's load from /proc (Linux only).
type ProcProbe struct {
	Window, Loop time.Duration
}

// Sample implements Probe.
func (ProcProbe) Sample() (LoadSample, error) { return LoadSample{}, errNotLinux }

func linuxOnly(name string) Bench {
	return Bench{Name: name, Run: func(float64) (Sample, error) { return Sample{}, errSkip(errNotLinux.Error()) }}
}

func nullSyscall() Bench               { return linuxOnly("getppid") }
func epollReady(k int) Bench           { return linuxOnly("epoll_wait") }
func futexWake() Bench                 { return linuxOnly("futex_wake") }
func epollCtlAE() Bench                { return linuxOnly("epoll_ctl_ae") }
func futexPingPong(sameCPU bool) Bench { return linuxOnly("futex_pingpong") }
func schedYield() Bench                { return linuxOnly("sched_yield_same_cpu") }
func tcpRR() Bench                     { return linuxOnly("tcp_rr_loopback") }
func pipeRR() Bench                    { return linuxOnly("pipe_rr") }

// onMeasureCPU cannot pin a thread here.
func onMeasureCPU(func() (Sample, error)) (Sample, error) {
	return Sample{}, errSkip(errNotLinux.Error())
}
