package lstack

// Mode says which stack the instance stands for: Savanna's user-space
// stack (Gazelle's lstack), or the Linux kernel's stack running the same
// engines. The protocol code is the same; the mode decides only how
// applications reach it (an intercepted call over a ring, or a system
// call that may put the thread to sleep). What the kernel's protocol work
// costs is a model the rig chooses (sim/cost.KernelPath), not the
// stack's business.
type Mode int

// Modes.
const (
	// ModeLstack: a poll-mode lcore, zero system calls, one copy per
	// byte between the application's buffer and the stack's.
	ModeLstack Mode = iota
	// ModeKernel: a system call per socket call, a copy per byte between
	// user and kernel, wake-ups and context switches when a sleeping
	// thread has work.
	ModeKernel
)

func (m Mode) String() string {
	if m == ModeKernel {
		return "kernel"
	}
	return "lstack"
}
