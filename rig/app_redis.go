package rig

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/apps/redis"
	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim"
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
	// Cores, when given, are the CPUs redis-benchmark's threads run on,
	// one each (thread i on Cores[i], as many as threads:), off the
	// stack's cores: their connections cross to every stack instance of
	// the host (system calls on a kernel stack, whose cores take the
	// NIC's interrupts), as a Linux client's threads do when irqbalance
	// puts the NIC's queues' interrupts on other CPUs. Absent, thread i
	// is an event loop on the host's stack core i (its connections that
	// instance's).
	Cores []int `yaml:"cores"`
}

// Validate leaves the checks to buildRedisBenchmark, which locates each
// of redis.BenchConfig's errors at its own key (benchConfigError) where
// stackAppSetup would name only the app's.
func (s *redisBenchSpec) Validate() error { return nil }

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

// Figures are redis-benchmark's: the totals, one set per test and, with
// several threads only (a one-thread report keeps its keys), threads,
// each test's stop_wait_ms and rps_to_last_reply, and each thread's share
// (thread.N).
func (r redisBenchRunner) Figures(now time.Duration) any {
	s := r.b.Stats(now)
	t := report.Tree{}
	t.AddStruct("", s)
	for name, c := range s.Commands {
		t.AddStruct(name, c)
	}
	if len(s.Threads) > 1 {
		t.Set("threads", float64(len(s.Threads)))
		for name, c := range s.Commands {
			t.Set(name+".stop_wait_ms", c.StopWaitMS)
			t.Set(name+".rps_to_last_reply", c.RPSToLastReply)
		}
		for i, ts := range s.Threads {
			k := "thread." + strconv.Itoa(i)
			t.AddStruct(k, ts)
			for name, n := range ts.Commands {
				t.Set(k+"."+name+".requests", float64(n))
			}
		}
	}
	return t
}

func buildRedisBenchmark(w *world, h *host, key string, node *yaml.Node) (string, runner, error) {
	var spec redisBenchSpec
	hs, remote, err := w.clientSetup(h, key, node, &spec, 6379)
	if err != nil {
		return "", nil, err
	}
	if err := spec.BenchConfig.Validate(); err != nil {
		return "", nil, benchConfigError(w, key, err)
	}
	if len(spec.Cores) > 0 {
		return buildRedisBenchThread(w, h, hs, key, spec, remote)
	}
	n := spec.ThreadCount()
	if n > len(hs.instances) {
		return "", nil, w.v.Errorf(key+".threads", "%d threads but the host's stack has %d cores: without cores:, thread i runs on stack core i; give the threads CPUs of their own with cores:", n, len(hs.instances))
	}
	nets := make([]redis.LcoreNet, n)
	for i := range nets {
		lcore := h.cores[hs.cores[i]]
		nets[i] = redis.LcoreNet{Instance: hs.instances[i], Port: rssPorts(hs.port, remote, i), Wake: lcore.Wake}
	}
	b, err := redis.NewLcoreBenchmark(spec.BenchConfig, nets, remote)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	for i, th := range b.Threads() {
		w.attach(h.cores[hs.cores[i]], th)
	}
	return spec.Name, redisBenchRunner{b: b, end: w.v.File.Span()}, nil
}

// benchConfigError locates an error of redis.BenchConfig.Validate, which
// begins with the key it is about ("threads: ..."), at that key.
func benchConfigError(w *world, key string, err error) error {
	sub, msg, ok := strings.Cut(err.Error(), ": ")
	if !ok || strings.ContainsAny(sub, " \"") {
		return w.v.Errorf(key, "%v", err)
	}
	return w.v.Errorf(key+"."+sub, "%s", msg)
}

// buildRedisBenchThread runs redis-benchmark's threads on the CPUs its
// cores: names, one each, their connections spread over the host's
// stack instances (a thread's j-th client on instance j mod N, from a
// local port whose replies RSS steers to that instance's queue), each
// crossing a bridge on its instance's core, as redis-server's thread's
// do; the threads, one process, share the bridges.
func buildRedisBenchThread(w *world, h *host, hs *hostStack, key string, spec redisBenchSpec, remote tcp.Addr) (string, runner, error) {
	n := spec.ThreadCount()
	if len(spec.Cores) != n {
		return "", nil, w.v.Errorf(key+".cores", "threads: %d but cores: lists %d CPUs; give one CPU per thread", n, len(spec.Cores))
	}
	var cores []*sim.Core
	for i, cpu := range spec.Cores {
		ck := key + ".cores[" + strconv.Itoa(i) + "]"
		if slices.Contains(hs.cores, cpu) {
			return "", nil, w.v.Errorf(ck, "CPU %d is a stack core (an lstack lcore polls it; a kernel stack's takes the NIC's interrupts); redis-benchmark's threads need others, or leave cores: out to run them on the stack's cores", cpu)
		}
		if slices.Contains(spec.Cores[:i], cpu) {
			return "", nil, w.v.Errorf(ck, "CPU %d is listed twice: each thread needs a CPU of its own", cpu)
		}
		core, err := h.core(w, cpu, false)
		if err != nil {
			return "", nil, w.v.Errorf(ck, "%v", err)
		}
		cores = append(cores, core)
	}
	var shared redis.ThreadNet
	router := lstack.NewRouter(32)
	for q, in := range hs.instances {
		lcore := h.cores[hs.cores[q]]
		br, err := lstack.NewBridge(in, router, lcore.Wake)
		if err != nil {
			return "", nil, w.v.Errorf(key, "%v", err)
		}
		simhost.BindBridge(w.eng, lcore, br)
		shared.Bridges = append(shared.Bridges, br)
		shared.Ports = append(shared.Ports, rssPorts(hs.port, remote, q))
	}
	nets := make([]redis.ThreadNet, n)
	for i, core := range cores {
		nets[i] = shared
		nets[i].Wake = core.Wake
	}
	b, err := redis.NewThreadsBenchmark(spec.BenchConfig, nets, remote)
	if err != nil {
		return "", nil, w.v.Errorf(key, "%v", err)
	}
	for i, th := range b.Threads() {
		w.attach(cores[i], th)
	}
	return spec.Name, redisBenchRunner{b: b, end: w.v.File.Span()}, nil
}
