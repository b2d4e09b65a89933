package cost

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// KernelSyscalls is a meter decorator that prices an application's
// socket calls as Linux's system calls, for the application side of a
// host whose scenario says stack.kind: kernel. The stack (stack/lstack)
// charges a socket call as it serves one, an intercepted call that
// crosses a lock-free ring; reaching the kernel's stack instead is a
// system call, a copy between user and kernel memory, and an epoll_wait
// that enters the kernel. The rig puts it between the application's core
// and the calls it makes to the stack (internal/simhost), both for an
// event loop on the stack's own core and for threads on other cores.
// The stack thread's side of the same calls is KernelPath's, and so is
// the transmit path a call runs in the caller's context, priced on the
// caller's core (see KernelPath).
type KernelSyscalls struct {
	m hw.Meter
	p ProductOps
}

// NewKernelSyscalls decorates m, the meter of the application's core; p
// names the product's operations it prices.
func NewKernelSyscalls(m hw.Meter, p ProductOps) *KernelSyscalls {
	return &KernelSyscalls{m: m, p: p}
}

// Now implements hw.Meter.
func (k *KernelSyscalls) Now() time.Duration { return k.m.Now() }

// Idle implements hw.Meter.
func (k *KernelSyscalls) Idle(d time.Duration) { k.m.Idle(d) }

// Charge implements hw.Meter: lstack's socket-call operations become the
// kernel's; every other operation is charged as it is.
func (k *KernelSyscalls) Charge(op hw.CostOp, n int64) {
	if k.p.HasEpollCtl && op == k.p.EpollCtl {
		// An interest-list change is epoll_ctl(2): its entry and exit,
		// and ep_insert (an epitem and an eppoll_entry allocated, the
		// socket polled, the entry hooked on its wait queue), ep_remove
		// (unhooked and freed) or ep_modify (re-polled) in
		// fs/eventpoll.c: the census of docs/cost-model.md finds it a
		// third of redis-benchmark's CPU.
		k.m.Charge(hw.CostSyscall, n)
		k.m.Charge(EpollCtlKernel, n)
		return
	}
	switch op {
	case k.p.SocketCall:
		// An intercepted call served by lstack is a system call.
		k.m.Charge(hw.CostSyscall, n)
	case k.p.RingOp:
		// No ring between the application and the kernel.
	case k.p.EpollWaitUser:
		// lstack's epoll_wait runs in user space; the kernel's is a
		// system call and ep_poll.
		k.m.Charge(hw.CostSyscall, n)
		k.m.Charge(EpollWaitKernel, n)
	case k.p.EpollEventUser:
		// Each ready event the wait returns is ep_send_events's work on
		// one item: its poll (tcp_poll) and the copy of its
		// epoll_event to user memory (fs/eventpoll.c).
		k.m.Charge(EpollWaitEvent, n)
	case hw.CostCopyByte:
		// The copy between the application's buffer and the socket is
		// copy_to_user / copy_from_user.
		k.m.Charge(KernelCopyByte, n)
	case hw.CostSyscallFutex:
		// lstack sleeps on a futex (sem_timedwait); a kernel socket's
		// reader sleeps in poll(2), the system call already charged.
	default:
		k.m.Charge(op, n)
	}
}
