package rig

import (
	"slices"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

type redisServerSpec struct {
	AppCommon `yaml:",inline"`
	Port      uint16 `yaml:"port"`
	// Threads is the server's event-loop threads: 1, Redis 6's main
	// thread (its io-threads, which only read and write for the main
	// thread, are not modelled; a value above 1 is refused).
	Threads *int `yaml:"threads"`
	// Cores are the CPUs the threads run on, one each. Default: the
	// first CPU on the NIC's NUMA node that is neither a stack core nor
	// (a kernel stack's cores take the NIC's interrupts) an interrupt
	// CPU.
	Cores []int `yaml:"cores"`
	// Placement is "thread" (the default: Redis's thread on a core of
	// its own, its connections crossing to the stack lcores) or "lcore":
	// Gazelle's IO-multiplexing model, one event loop on each stack
	// lcore serving the connections RSS gives that lcore (several Redis
	// processes, one per lcore, sharing one keyspace: not what the
	// Gazelle article ran).
	Placement string `yaml:"placement"`
}

// redisLcoreRunner is redis-server's placement: lcore, one server per
// stack instance.
type redisLcoreRunner struct{ servers []*redis.Server }

func (r redisLcoreRunner) ResetStats(time.Duration) {
	for _, s := range r.servers {
		s.ResetStats()
	}
}

// Completed is the commands the servers ran.
func (r redisLcoreRunner) Completed(time.Duration) (uint64, string) {
	var n uint64
	for _, s := range r.servers {
		n += s.Stats().Commands
	}
	return n, "requests"
}

func (r redisLcoreRunner) Figures(time.Duration) any {
	t := report.Tree{}
	var total redis.ServerStats
	for i, s := range r.servers {
		st := s.Stats()
		t.AddStruct("instance."+strconv.Itoa(i), st)
		total.Accepted += st.Accepted
		total.Closed += st.Closed
		total.Commands += st.Commands
		total.ProtocolErrors += st.ProtocolErrors
		total.Open += st.Open
	}
	t.AddStruct("total", total)
	t.Set("threads", float64(len(r.servers)))
	return t
}

// buildRedisLcores runs one event loop on each stack instance's lcore.
func buildRedisLcores(w *world, h *host, hs *hostStack, key string, spec redisServerSpec) (string, runner, error) {
	if len(spec.Cores) > 0 || spec.Threads != nil {
		return "", nil, w.v.Errorf(key+".placement", "lcore: the event loops run on the stack's cores, one each; threads and cores do not apply")
	}
	var r redisLcoreRunner
	for i, in := range hs.instances {
		s, err := redis.NewServer(in, spec.Port, hs.store)
		if err != nil {
			return "", nil, w.v.Errorf(key+".port", "%v", err)
		}
		w.attach(h.cores[hs.cores[i]], s)
		r.servers = append(r.servers, s)
	}
	return spec.Name, r, nil
}

// redisServerRunner is the server's thread and the bridges that carry
// its connections, one per stack instance.
type redisServerRunner struct {
	t       *redis.ThreadServer
	bridges []*lstack.Bridge
}

func (r redisServerRunner) ResetStats(time.Duration) {
	r.t.ResetStats()
	for _, b := range r.bridges {
		b.ResetStats()
	}
}

// Completed is the commands the server ran.
func (r redisServerRunner) Completed(time.Duration) (uint64, string) {
	return r.t.Stats().Commands, "requests"
}

// Figures are the thread's counters (total), its epoll's, and per stack
// instance the connections it carried (instance.N: accepted, closed and
// open on that instance's bridge).
func (r redisServerRunner) Figures(time.Duration) any {
	t := report.Tree{}
	t.AddStruct("total", r.t.Stats())
	t.AddStruct("epoll", r.t.Epoll().Stats())
	t.Set("threads", 1)
	t.Set("turns", float64(r.t.Turns()))
	for i, b := range r.bridges {
		st := b.Stats()
		t.AddStruct("instance."+strconv.Itoa(i), redis.ServerStats{Accepted: st.Accepted, Closed: st.Closed, Open: b.Open()})
		t.AddStruct("bridge."+strconv.Itoa(i), st)
	}
	return t
}

// buildRedisServer runs Redis's one event-loop thread on an application
// core, its connections crossing a bridge on each stack lcore (Gazelle's
// asymmetric model; system calls on a kernel stack), as oltp-server
// runs mysqld's threads.
func buildRedisServer(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec redisServerSpec
	if err := w.v.Decode(key, node, &spec); err != nil {
		return "", nil, err
	}
	if spec.Port == 0 {
		spec.Port = 6379
	}
	hs, err := w.stackApp(h, key)
	if err != nil {
		return "", nil, err
	}
	switch spec.Placement {
	case "", "thread":
	case "lcore":
		return buildRedisLcores(w, h, hs, key, spec)
	default:
		return "", nil, w.v.Errorf(key+".placement", "%q; expected thread (the default) or lcore", spec.Placement)
	}
	threads := 1
	if spec.Threads != nil {
		threads = *spec.Threads
	}
	if threads != 1 {
		return "", nil, w.v.Errorf(key+".threads", "%d: Redis runs commands on one thread (io-threads, which only move bytes for it, are not modelled); only 1 is accepted", threads)
	}
	cpu, ck, err := redisCore(w, h, hs, key, spec.Cores)
	if err != nil {
		return "", nil, err
	}
	core, err := h.core(w, cpu, false)
	if err != nil {
		return "", nil, w.v.Errorf(ck, "%v", err)
	}
	router := lstack.NewRouter(32)
	ep := lstack.NewEpoll(hs.instances[0])
	var r redisServerRunner
	for i, in := range hs.instances {
		lcore := h.cores[hs.cores[i]]
		b, err := lstack.NewBridge(in, router, lcore.Wake)
		if err != nil {
			return "", nil, w.v.Errorf(key, "%v", err)
		}
		if err := b.Listen(spec.Port, 1024, ep.Accepted); err != nil {
			return "", nil, w.v.Errorf(key+".port", "%v", err)
		}
		simhost.BindBridge(w.eng, lcore, b)
		r.bridges = append(r.bridges, b)
	}
	r.t = redis.NewThreadServer(ep, hs.store, core.Wake)
	w.attach(core, r.t)
	return spec.Name, r, nil
}

// redisCore resolves the server thread's CPU and the key that names it.
func redisCore(w *world, h *host, hs *hostStack, key string, cores []int) (int, string, error) {
	switch len(cores) {
	case 0:
	case 1:
		ck := key + ".cores[0]"
		if slices.Contains(hs.cores, cores[0]) {
			return 0, "", w.v.Errorf(ck, "CPU %d is a stack core (an lstack lcore polls it; a kernel stack's takes the NIC's interrupts); Redis's thread needs another", cores[0])
		}
		return cores[0], ck, nil
	default:
		return 0, "", w.v.Errorf(key+".cores", "%d CPUs for 1 thread: give one", len(cores))
	}
	node := w.v.File.Hosts[h.name].NICs[indexOf(h, hs.port)].NUMANode
	for _, c := range h.topo.CPUs {
		if c.Node == node && !slices.Contains(hs.cores, c.ID) {
			return c.ID, key, nil
		}
	}
	return 0, "", w.v.Errorf(key+".cores", "every CPU of NUMA node %d on host %s is a stack core; give Redis's thread a CPU", node, h.name)
}

type redisBenchSpec struct {
	AppCommon         `yaml:",inline"`
	redis.BenchConfig `yaml:",inline"`
	ClientApp         `yaml:",inline"`
	// Cores, when given, is the one CPU redis-benchmark's thread runs
	// on, off the stack's cores: its connections cross to every stack
	// instance of the host (system calls on a kernel stack, whose cores
	// take the NIC's interrupts), as a Linux client's thread does when
	// irqbalance puts the NIC's queues' interrupts on other CPUs.
	// Absent, the thread is an event loop on the host's first stack
	// core.
	Cores []int `yaml:"cores"`
}

// redisBenchRunner drives a redis-benchmark; end is the run's end, the
// end of its active phase while it has not finished.
type redisBenchRunner struct {
	b   *redis.Benchmark
	end time.Duration
}

func (r redisBenchRunner) ResetStats(time.Duration)   { r.b.ResetStats() }
func (r redisBenchRunner) Latency() *latency.Recorder { return r.b.Latency() }

// Completed is the replies received in the window.
func (r redisBenchRunner) Completed(time.Duration) (uint64, string) {
	return r.b.Requests(), "requests"
}

// Active is the simulated time the benchmark sent its first request of
// the measured window and when its last test finished (the run's end if
// it did not); ok is false when it sent nothing in the window.
func (r redisBenchRunner) Active() (start, end time.Duration, ok bool) {
	start, end, ok, finished := r.b.Active()
	if !finished {
		end = r.end
	}
	return start, end, ok
}

func (r redisBenchRunner) Figures(now time.Duration) any {
	s := r.b.Stats(now)
	t := report.Tree{}
	t.AddStruct("", s)
	for name, c := range s.Commands {
		t.AddStruct(name, c)
	}
	return t
}

func buildRedisBenchmark(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec redisBenchSpec
	hs, remote, err := w.clientSetup(h, key, node, &spec, 6379)
	if err != nil {
		return "", nil, err
	}
	if len(spec.Cores) > 0 {
		return buildRedisBenchThread(w, h, hs, key, spec, remote)
	}
	in := hs.instances[0]
	ports := rssPorts(hs.port, remote, 0)
	b, err := redis.NewBenchmark(spec.BenchConfig, in, remote, ports)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(h.cores[hs.cores[0]], b)
	return spec.Name, redisBenchRunner{b: b, end: w.v.File.Span()}, nil
}

// buildRedisBenchThread runs redis-benchmark's thread on the CPU its
// cores: names, its connections spread over the host's stack instances
// (client i on instance i mod N, from a local port whose replies RSS
// steers to that instance's queue), each crossing a bridge on its
// instance's core, as redis-server's thread's do.
func buildRedisBenchThread(w *world, h *host, hs *hostStack, key string, spec redisBenchSpec, remote tcp.Addr) (string, runner, error) {
	if len(spec.Cores) != 1 {
		return "", nil, w.v.Errorf(key+".cores", "%d CPUs for redis-benchmark's one thread: give one", len(spec.Cores))
	}
	ck := key + ".cores[0]"
	cpu := spec.Cores[0]
	if slices.Contains(hs.cores, cpu) {
		return "", nil, w.v.Errorf(ck, "CPU %d is a stack core (an lstack lcore polls it; a kernel stack's takes the NIC's interrupts); redis-benchmark's thread needs another, or leave cores: out to run it on the stack's first core", cpu)
	}
	core, err := h.core(w, cpu, false)
	if err != nil {
		return "", nil, w.v.Errorf(ck, "%v", err)
	}
	net := redis.ThreadNet{Wake: core.Wake}
	router := lstack.NewRouter(32)
	for q, in := range hs.instances {
		lcore := h.cores[hs.cores[q]]
		br, err := lstack.NewBridge(in, router, lcore.Wake)
		if err != nil {
			return "", nil, w.v.Errorf(key, "%v", err)
		}
		simhost.BindBridge(w.eng, lcore, br)
		net.Bridges = append(net.Bridges, br)
		net.Ports = append(net.Ports, rssPorts(hs.port, remote, q))
	}
	b, err := redis.NewThreadBenchmark(spec.BenchConfig, net, remote)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	w.attach(core, b)
	return spec.Name, redisBenchRunner{b: b, end: w.v.File.Span()}, nil
}
