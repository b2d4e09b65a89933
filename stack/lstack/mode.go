package lstack

// Mode says how an instance's applications wait for it: on the
// instance's spinning lcore (Gazelle's lstack: an event loop that polls
// and never sleeps) or as threads that sleep when they find nothing and
// are woken when work arrives (the shape of a program over Linux's
// stack). It chooses no price: what a socket call, a copy or a protocol
// operation costs on a host that stands for the kernel is a model the
// binding chooses (sim/cost.KernelPath for the stack's core,
// sim/cost.KernelSyscalls for the application's calls; internal/simhost
// wires them). The only thing it changes inside the stack is whether an
// application's empty readiness wait puts its thread to sleep, and so
// whether its next wait that finds work pays the scheduler's wake-up and
// context switch (EventSet.Wait).
type Mode int

// Modes.
const (
	// ModeLstack: applications run on a poll-mode lcore and never sleep.
	ModeLstack Mode = iota
	// ModeKernel: applications are threads that sleep in their
	// readiness wait when it finds nothing, as on Linux's stack.
	ModeKernel
)

// Sleeps reports whether the mode's application threads sleep when a
// wait finds nothing.
func (m Mode) Sleeps() bool { return m == ModeKernel }

func (m Mode) String() string {
	if m == ModeKernel {
		return "kernel"
	}
	return "lstack"
}
