// Package redis holds the two programs of Gazelle's Redis experiment: a
// RESP key-value server and a load generator in the shape of
// redis-benchmark. They make their socket calls through the stack
// (stack/lstack), which charges them as Savanna's user-space stack or as
// the kernel's, so one scenario can compare the two as the article does.
//
// ThreadServer is Redis as it runs: one event-loop thread (Redis 6's main
// thread) on a core of its own, serving every connection of the host
// through the stack lcores' bridges and one epoll (lstack.Epoll), in the
// shape of ae.c's aeProcessEvents and networking.c's read and write
// handlers. Server is the same RESP service as an event loop on a stack
// instance's lcore (Gazelle's IO-multiplexing model), one per instance,
// for specs and programs that want it there. Benchmark is
// redis-benchmark, its ae threads (BenchThread: one by default, N with
// --threads N) each either an event loop on a stack instance's lcore
// (NewBenchmark, NewLcoreBenchmark), with an event set of its own
// (lstack.EventSet) so that it shares an instance with other
// applications, or on a core of its own (NewThreadBenchmark,
// NewThreadsBenchmark), its connections opened through the stack
// lcores' bridges (lstack.Bridge.Connect) and waited on with an epoll
// of its own, as a Linux client's threads run off the CPUs that take
// the NIC's interrupts. The threads share each test's request budget and
// its latency record (redis-benchmark.c's atomics and its one
// hdr_histogram); see Benchmark for how a test with several threads
// ends.
//
// Each command is charged its dispatch (CostCommand), its bytes scanned
// and its own procedure (CostCmdSet, CostCmdGet, …): SET and GET cost a
// server differently, as in Redis.
//
// # The benchmark's figures
//
// redis-benchmark runs one test per command, one after the other, each
// bounded by a count of requests (-n) rather than by time. Each client
// starts sending as soon as its connection is up: a client whose SYN was
// lost holds up nobody. A test's figures (CommandResult) describe what
// completed so far: the replies received, their rate over the test's
// time (from its first request to its last reply, or to now while it
// runs), their latencies, and the requests still outstanding; Finished
// says the test got all its replies. Every configured command has its
// figures from the start, zero until its test runs.
//
// A warm-up (ResetStats) starts a measured window, and the benchmark
// starts its tests again from the first command in it, on the
// connections the warm-up opened: every test then runs, and is measured,
// inside the window, as the real tool run after a warm-up would be.
// Requests in flight at that moment are answered in the window; their
// replies count in the total (BenchStats.Requests) but in no test, and
// their latency nowhere. So over the window the server's commands and
// the benchmark's Requests agree but for the requests in flight at its
// edges: the server is ahead by at most Outstanding at the end, and
// behind by at most clients × pipeline at the start.
package redis
