package calibrate

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// aeCtlCycle is the interest-list changes one request of an ae event
// loop makes on its socket, as redis-benchmark's does (redis-benchmark.c
// with ae.c and ae_epoll.c, Redis 7.0): resetClient deletes the writable
// event (the socket stays readable: EPOLL_CTL_MOD), deletes the readable
// one (nothing left: EPOLL_CTL_DEL) and creates the writable one
// (EPOLL_CTL_ADD); writeHandler, once the request is written, deletes the
// writable event (EPOLL_CTL_DEL) and creates the readable one
// (EPOLL_CTL_ADD). aeApiDelEvent is a MOD while another event remains and
// a DEL otherwise; aeApiAddEvent an ADD when the fd had none. strace -c
// of redis-benchmark -c 50 -n 20000 counts 5.005 epoll_ctl calls a
// request (docs/cost-model.md, "What the real programs do per request").
var aeCtlCycle = []struct {
	op     int
	events uint32
}{
	{unix.EPOLL_CTL_MOD, unix.EPOLLIN},
	{unix.EPOLL_CTL_DEL, 0},
	{unix.EPOLL_CTL_ADD, unix.EPOLLOUT},
	{unix.EPOLL_CTL_DEL, 0},
	{unix.EPOLL_CTL_ADD, unix.EPOLLIN},
}

// epollCtlAE is epoll_ctl(2) on a connected loopback TCP socket in ae's
// per-request cycle (aeCtlCycle): two ADDs (ep_insert allocates an
// epitem and an eppoll_entry, polls the socket and hooks the entry on
// its wait queue), two DELs (ep_remove unhooks and frees them) and a MOD
// (ep_modify re-polls). The figure is thread CPU time per call, the
// system call's entry and exit included.
func epollCtlAE() Bench {
	return Bench{Name: "epoll_ctl_ae", Unit: "ns/call",
		What: "epoll_ctl(2) by raw syscall on a connected 127.0.0.1 TCP socket in ae.c's per-request cycle of redis-benchmark (MOD, DEL, ADD writable, DEL, ADD readable), thread CPU time per call",
		Run: func(scale float64) (Sample, error) {
			return onMeasureCPU(func() (Sample, error) { return epollCtlRun(budgetFor(scale)) })
		}}
}

func epollCtlRun(b budget) (Sample, error) {
	c, s, err := tcpPair()
	if err != nil {
		return Sample{}, err
	}
	defer unix.Close(c)
	defer unix.Close(s)
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return Sample{}, fmt.Errorf("epoll_create1: %w", err)
	}
	defer unix.Close(ep)
	// The cycle starts where a request ends: the socket registered for
	// reading.
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c)}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c, &ev); err != nil {
		return Sample{}, fmt.Errorf("epoll_ctl: %w", err)
	}
	var failed error
	v, _, err := timeBatches(b, threadClock, func(n int) (float64, error) {
		calls := 0
		for range n {
			for _, st := range aeCtlCycle {
				ev := unix.EpollEvent{Events: st.events, Fd: int32(c)}
				_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(ep), uintptr(st.op), uintptr(c), uintptr(unsafe.Pointer(&ev)), 0, 0)
				if e != 0 && failed == nil {
					failed = fmt.Errorf("epoll_ctl op %d: %w", st.op, e)
				}
				calls++
			}
		}
		return float64(calls), failed
	})
	return Sample{Value: v}, err
}
