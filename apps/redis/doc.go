// Package redis holds the two programs of Gazelle's Redis experiment as
// event loops on a stack instance's lcore (Gazelle's IO-multiplexing
// model): a RESP key-value Server and a load generator in the shape of
// redis-benchmark. They make their socket calls through the instance
// (stack/lstack), which charges them as Savanna's user-space stack or as
// the kernel's, so one scenario can compare the two as the article does.
// Each has an event set of its own (lstack.EventSet), so they share an
// instance with other applications.
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
