package checkmodel

// Mechanism names what the model still lacks that a miss of figure f
// points at (issue 18's "Model structure the calibration needs", less
// what is built: the load generator's own work, epoll per ready event,
// same- and cross-core wake-ups, per-command RESP prices, the kernel's
// per-connection working set, spreads from calibration). It is keyed by
// the figure, not fitted to a run: it says where to look, the table
// says by how much.
func Mechanism(f Figure) string {
	switch f {
	case FigMean:
		return "at one client the round trip is the sum of both hosts' paths; for Savanna live, simrun serve's TAP (a read(2) " +
			"or write(2) on /dev/net/tun per frame, the bridge's and the TAP's softirq, the Go runtime's scheduling), which the " +
			"twin's poll-mode lcore on a PMD does not have"
	case FigRPS:
		return "from 200 clients on, the per-connection state in the core's cache: the kernel's socket state is modelled " +
			"(kernel_conn_bytes against core_cache_bytes, each kernel segment paying cache_miss for the evicted share), but not " +
			"Redis's and redis-benchmark's own per-client state in the same cache (Redis's client struct and query buffer, " +
			"PROTO_IOBUF_LEN 16 KiB in server.h; hiredis's context and reader), nor a cache share below the L2's size (code, " +
			"skbs and the applications' data take part of it: the calibration's round trips rise already at 128 connections, " +
			"where the model's sockets fit); and the two namespaces sharing this machine's CPUs, a veth's softirq running on the " +
			"sender's CPU, which two simulated hosts do not"
	case FigTail:
		return "the spread the calibration measures (kernel segments, context switches, wake-ups) is drawn per charge and " +
			"independently; live, a slow round trip is slow as a whole (an interrupt, a preemption by another process, a cold " +
			"cache after a sleep), and the queuing of a socket's backlog behind a busy reader adds to it"
	case FigServerCPU:
		return "where Linux charges a veth's receive softirq (to the sending process's CPU time, not the receiver's, and with " +
			"it the receiver's socket lines dirtied on the sender's core, so that its read and epoll_wait find them remote), the " +
			"per-client state of Redis missing the cache at many clients (as throughput), and for Savanna live an idle lcore " +
			"polling for rt.DefaultSpin (50 us) before it parks, so that at a few clients its CPU is the whole interval between " +
			"requests, where the twin leaves its idle polls out"
	case FigClientCPU:
		return "per request (docs/cost-model.md, \"What the real programs do per request\"): the receive path of the peer's " +
			"socket, which a veth runs in the sender's send(2) on the sender's CPU and leaves the receiver's socket lines " +
			"dirty in the sender's cache (the recvfrom and epoll_wait that follow cost 3-5 times the model's price), " +
			"redis-benchmark's user time (1.6-1.8 us against the model's 0.55), and at many clients its own per-client state " +
			"(its client struct, hiredis's context and reader) and both ends' sockets in one L2; the five epoll_ctl a request " +
			"are priced (epoll_ctl_kernel)"
	case FigP99:
		return "as p99/mean"
	}
	return ""
}
