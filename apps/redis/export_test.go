package redis

import (
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// The one-thread shorthands the specs build generators with; the rig
// wires NewLcoreBenchmark and NewThreadsBenchmark.

// NewBenchmark returns a one-thread generator on in against remote. port
// gives the local port of connection i (0: let the stack choose); the
// wiring uses it to pick ports whose replies RSS steers back to this
// instance's queue. Its connections report to an event set of its own.
// The Benchmark is the thread's poller.
func NewBenchmark(cfg BenchConfig, in *lstack.Instance, remote tcp.Addr, port func(i int) uint16) (*Benchmark, error) {
	return NewLcoreBenchmark(cfg, []LcoreNet{{Instance: in, Port: port}}, remote)
}

// NewThreadBenchmark returns a one-thread generator whose thread runs on
// a core of its own, off the stack's lcores (on a kernel host, off the
// CPUs that take the NIC's interrupts), against remote: its connections
// cross to the stack threads through net's bridges, as redis-server's
// thread's do (ThreadServer). Attach it to its core; net.Wake is that
// core's doorbell.
func NewThreadBenchmark(cfg BenchConfig, net ThreadNet, remote tcp.Addr) (*Benchmark, error) {
	return NewThreadsBenchmark(cfg, []ThreadNet{net}, remote)
}
