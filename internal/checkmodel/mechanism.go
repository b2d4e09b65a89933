package checkmodel

// Mechanism names the parts of issue 18's "Model structure the
// calibration needs" a miss of figure f points at. It is keyed by the
// figure, not fitted to a run: it says where to look, the table says by
// how much.
func Mechanism(f Figure) string {
	switch f {
	case FigMean:
		return "at one client the round trip is the sum of both hosts' paths: the wake-up and context switch of a sleeping " +
			"reader on each side (priced as one op, not same-core and cross-core apart), epoll_wait per call and not per " +
			"ready event, and the load generator's own parsing and system calls"
	case FigRPS:
		return "the load generator paying for its own work (redis-benchmark's syscalls, parsing and kernel path, so the client " +
			"can be the bottleneck), the Redis thread on a core of its own off the interrupt core, and the two namespaces " +
			"sharing this machine's CPUs (and the softirq of a veth running on the sender's CPU), which two simulated hosts do not"
	case FigTail:
		return "service-time variability (cache misses, scheduler noise): the simulation has none, so its p99 sits near its mean, " +
			"and socket-buffer queuing on the kernel path"
	case FigServerCPU:
		return "per-command RESP prices (SET and GET differ in real Redis), epoll_wait per ready event, and where Linux charges a " +
			"veth's receive softirq (to the sending process's CPU time, not the receiver's)"
	case FigClientCPU:
		return "the load generator paying for its own work: redis-benchmark's system calls, RESP parsing and kernel path are " +
			"charged little or nothing in the model"
	case FigP99:
		return "as p99/mean"
	}
	return ""
}
