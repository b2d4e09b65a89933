package redis

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// BenchConfig are redis-benchmark's knobs that matter here.
type BenchConfig struct {
	// Clients is the number of connections (-c), default 50.
	Clients int `yaml:"clients"`
	// Requests is the number of requests per command (-n), default
	// 100000: the test's total, shared by every thread.
	Requests int `yaml:"requests"`
	// Commands are the tests run one after the other (-t), default
	// PING, SET, GET.
	Commands []string `yaml:"commands"`
	// DataSize is the value size of SET (-d), default 3 bytes.
	DataSize int `yaml:"data_size"`
	// Pipeline is the requests in flight per connection (-P), default 1.
	Pipeline int `yaml:"pipeline"`
	// Threads is the event-loop threads (--threads, since Redis 6.0),
	// default 1: one ae loop serves every client. With N threads
	// (redis-benchmark.c createBenchmarkThread), client i is thread
	// i mod N's (createMissingClients: liveclients % num_threads), so
	// the first Clients mod N threads have one client more; every
	// thread draws on the test's one request budget (requests_issued,
	// requests_finished) and records into one latency histogram.
	Threads int `yaml:"threads"`
}

// maxThreads is redis-benchmark's MAX_THREADS (redis-benchmark.c); the
// real tool lowers a larger --threads to it, the model refuses it.
const maxThreads = 500

// Validate checks the configuration; errors name the key.
func (c *BenchConfig) Validate() error {
	switch {
	case c.Clients < 0 || c.Clients > 100000:
		return fmt.Errorf("clients: %d is outside 1..100000", c.Clients)
	case c.Requests < 0:
		return fmt.Errorf("requests: %d is negative", c.Requests)
	case c.DataSize < 0 || c.DataSize > 1<<20:
		return fmt.Errorf("data_size: %d is outside 0..1048576", c.DataSize)
	case c.Pipeline < 0 || c.Pipeline > 1024:
		return fmt.Errorf("pipeline: %d is outside 1..1024", c.Pipeline)
	case c.Threads < 0 || c.Threads > maxThreads:
		return fmt.Errorf("threads: %d is outside 1..%d (redis-benchmark's MAX_THREADS)", c.Threads, maxThreads)
	}
	for i, cmd := range c.Commands {
		switch strings.ToUpper(cmd) {
		case "PING", "SET", "GET", "INCR":
		default:
			return fmt.Errorf("commands[%d]: %q; expected PING, SET, GET or INCR", i, cmd)
		}
		for _, prev := range c.Commands[:i] {
			if strings.EqualFold(prev, cmd) {
				// Its figures are named by the command: a second run
				// would have none of its own.
				return fmt.Errorf("commands[%d]: %q is already listed", i, cmd)
			}
		}
	}
	return nil
}

// ThreadCount is the event-loop threads the configuration asks for (its
// Threads, 1 when unset).
func (c BenchConfig) ThreadCount() int { return max(c.Threads, 1) }

func (c BenchConfig) withDefaults() BenchConfig {
	if c.Clients == 0 {
		c.Clients = 50
	}
	if c.Requests == 0 {
		c.Requests = 100000
	}
	if len(c.Commands) == 0 {
		c.Commands = []string{"PING", "SET", "GET"}
	}
	if c.DataSize == 0 {
		c.DataSize = 3
	}
	if c.Pipeline == 0 {
		c.Pipeline = 1
	}
	c.Threads = c.ThreadCount()
	cmds := make([]string, len(c.Commands)) // not the caller's slice
	for i, cmd := range c.Commands {
		cmds[i] = strings.ToUpper(cmd)
	}
	c.Commands = cmds
	return c
}

// CommandResult is one test's figures, as redis-benchmark prints them,
// over what completed so far in the measured window: they grow while the
// test runs and are final once Finished.
type CommandResult struct {
	// Requests are the replies received to the test's requests.
	Requests uint64 `json:"requests"`
	// RPS is Requests over the test's time so far: from its first
	// request to its end (its last reply with one thread; with several,
	// when the last thread's loop stopped: see StopWaitMS), or to now
	// while it runs. redis-benchmark's throughput summary is
	// requests_finished / totlatency, the time from the test's start to
	// the join of its threads.
	RPS   float64 `json:"rps"`
	AvgMS float64 `json:"avg_ms"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
	// Outstanding are the test's requests sent and not answered.
	Outstanding uint64 `json:"outstanding"`
	// Finished says the test got all its replies in the window.
	Finished bool `json:"finished"`
	// StopWaitMS is, once the test finished, the time from its last
	// reply to its end: with several threads, the threads other than
	// the one that took the last reply stop only at their next
	// throughput tick (see Benchmark), and the test's time counts it.
	// Zero with one thread (the rig reports it only with several).
	StopWaitMS float64 `json:"-"`
	// RPSToLastReply is Requests over the time from the test's first
	// request to its last reply: RPS without the stop wait, what a run
	// with many more requests (where the wait is a sliver of the test)
	// reports. Equal to RPS with one thread.
	RPSToLastReply float64 `json:"-"`
}

// ThreadStats are one event-loop thread's share of the work.
type ThreadStats struct {
	// Clients are the thread's connections (client i is thread
	// i mod N's); Connected those connected now.
	Clients   int `json:"clients"`
	Connected int `json:"connected"`
	// Requests are the replies the thread received in the window, as
	// BenchStats.Requests counts them; the threads' sum is that total.
	Requests uint64 `json:"requests"`
	// Commands are the replies it received to each test's requests;
	// the threads' sum is the test's CommandResult.Requests.
	Commands map[string]uint64 `json:"-"`
}

// BenchStats are the generator's figures: one result per command, and
// totals over all of them.
type BenchStats struct {
	Commands map[string]CommandResult `json:"-"`
	// Requests are every reply received in the window, those to
	// requests sent before it (at a warm-up's end) included.
	Requests uint64 `json:"requests"`
	// Outstanding are the requests sent and not answered now.
	Outstanding     uint64  `json:"outstanding"`
	AvgMS           float64 `json:"avg_ms"`
	P99MS           float64 `json:"p99_ms"`
	Errors          uint64  `json:"errors"`
	ConnectFailures uint64  `json:"connect_failures"`
	// Connected is the clients connected now.
	Connected int  `json:"connected"`
	Finished  bool `json:"finished"`
	// Threads are each event-loop thread's figures, thread i at i.
	Threads []ThreadStats `json:"-"`
}

// Benchmark is a redis-benchmark: the state its threads share (the
// running test, its request budget, its one latency record) and its ae
// event loops (BenchThread), each on a stack instance's lcore
// (NewLcoreBenchmark) or on a core of its own (NewThreadsBenchmark).
//
// With several threads, a test is redis-benchmark.c's benchmark(): the
// threads start together and the test ends when the last of them is
// joined. The thread that receives the test's last reply stops its loop
// at once (clientDone, then freeClient's aeStop); the others, whose
// clients have no request left to send, stop at their next throughput
// tick (showThroughput, a time event every SHOW_THROUGHPUT_INTERVAL,
// 250 ms, from the thread's start, which stops the loop once
// requests_finished reaches -n). The test's time, and so its
// throughput, runs to that tick. While they wait the real threads spin
// (their clients' writable events fire and writeHandler returns at
// once); the model's sleep until the tick, so that spin's CPU is not
// charged.
type Benchmark struct {
	cfg   BenchConfig
	loops []*BenchThread
	value []byte

	// epoch numbers the measured windows: ResetStats starts a new one,
	// and replies to requests of an older one count only in the totals.
	epoch uint32
	// phase is the test running; sent and done count its requests sent
	// and answered in this epoch, over every thread
	// (requests_issued, requests_finished).
	phase      int
	sent, done int
	cmds       []commandState
	all        *latency.Recorder
	replies    uint64 // every reply in the window
	inFlight   int    // every request sent and not answered
	errors     uint64
	connFails  uint64
	// draining says the running test got its last reply and waits for
	// its threads to stop; stopped counts those that did.
	draining bool
	stopped  int
}

// commandState is one test's progress in the current epoch.
type commandState struct {
	lat         *latency.Recorder
	done        uint64
	outstanding int
	// start is the test's first request, end its end (the last
	// thread's stop), lastReply its last reply.
	start, end, lastReply time.Duration
	running               bool
	finished              bool
}

// throughputTick is redis-benchmark's SHOW_THROUGHPUT_INTERVAL
// (redis-benchmark.c): a thread's loop checks every 250 ms whether the
// test is done.
const throughputTick = 250 * time.Millisecond

// LcoreNet is one event-loop thread on a stack instance's lcore: its
// connections are the instance's, client j of the thread (its j-th)
// from local port Port(j) (0 or nil: the stack chooses), and Wake is the
// lcore's doorbell (needed with several threads, for one thread to start
// a test on the others).
type LcoreNet struct {
	Instance *lstack.Instance
	Port     func(i int) uint16
	Wake     func(at time.Duration)
}

// NewLcoreBenchmark returns a generator whose thread i is an event loop
// on nets[i]'s lcore, one LcoreNet per thread (cfg's Threads of them).
// Attach Thread(i) to its lcore.
func NewLcoreBenchmark(cfg BenchConfig, nets []LcoreNet, remote tcp.Addr) (*Benchmark, error) {
	if err := checkThreads(cfg, len(nets)); err != nil {
		return nil, err
	}
	ns := make([]benchNet, len(nets))
	wakes := make([]func(time.Duration), len(nets))
	for i, n := range nets {
		if n.Instance == nil || (len(nets) > 1 && n.Wake == nil) {
			return nil, fmt.Errorf("redis-benchmark: thread %d needs its stack instance and, with several threads, its lcore's doorbell", i)
		}
		ns[i] = &lcoreNet{in: n.Instance, set: n.Instance.NewEventSet(), remote: remote, port: n.Port}
		wakes[i] = n.Wake
	}
	return newBenchmark(cfg, ns, wakes), nil
}

// NewThreadsBenchmark returns a generator whose thread i runs on a core
// of its own, nets[i]'s (cfg's Threads of them): each waits on an epoll
// of its own, and its connections cross the bridges its ThreadNet
// names (the threads of one process share its bridges). Attach Thread(i)
// to its core.
func NewThreadsBenchmark(cfg BenchConfig, nets []ThreadNet, remote tcp.Addr) (*Benchmark, error) {
	if err := checkThreads(cfg, len(nets)); err != nil {
		return nil, err
	}
	ns := make([]benchNet, len(nets))
	wakes := make([]func(time.Duration), len(nets))
	for i, n := range nets {
		if len(n.Bridges) == 0 || n.Wake == nil {
			return nil, errors.New("redis-benchmark: a thread of its own needs at least one bridge and its core's doorbell")
		}
		ns[i] = &threadNet{cfg: n, remote: remote, ep: lstack.NewEpoll(n.Bridges[0].Instance()),
			socks: map[*lstack.Socket]*benchClient{}, buf: make([]byte, readLen)}
		wakes[i] = n.Wake
	}
	return newBenchmark(cfg, ns, wakes), nil
}

// checkThreads validates cfg and that it gets one net per thread.
func checkThreads(cfg BenchConfig, nets int) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if n := cfg.ThreadCount(); nets != n {
		return fmt.Errorf("threads: %d but %d threads' placements given", n, nets)
	}
	return nil
}

func newBenchmark(cfg BenchConfig, nets []benchNet, wakes []func(time.Duration)) *Benchmark {
	cfg = cfg.withDefaults()
	b := &Benchmark{cfg: cfg, value: []byte(strings.Repeat("x", cfg.DataSize)), all: latency.New()}
	for range cfg.Commands {
		b.cmds = append(b.cmds, commandState{lat: latency.New()})
	}
	n := len(nets)
	for i, net := range nets {
		// createMissingClients gives client k to thread k % N: the
		// first Clients % N threads have one more.
		share := cfg.Clients / n
		if i < cfg.Clients%n {
			share++
		}
		b.loops = append(b.loops, &BenchThread{b: b, net: net, wake: wakes[i], share: share,
			cmdDone: make([]uint64, len(cfg.Commands))})
	}
	return b
}

// Threads returns the event-loop threads, thread i at i, for the wiring
// to attach each to its core.
func (b *Benchmark) Threads() []*BenchThread { return b.loops }

// Poll runs one turn of the first thread's event loop: the Benchmark of
// one thread is its poller. With several, attach each of Threads.
func (b *Benchmark) Poll(m hw.Meter) (bool, time.Duration) { return b.loops[0].Poll(m) }

// Latency returns the recorder of the latency of every request sent in
// the window, for plots.
func (b *Benchmark) Latency() *latency.Recorder { return b.all }

// ResetStats starts a measured window: the tests start again from the
// first command on the connections already open (see the package
// documentation), and every figure counts from now. With several
// threads each is woken to start it (one thread's loop is running: it
// is what is measured).
func (b *Benchmark) ResetStats() {
	b.epoch++
	b.phase, b.sent, b.done = 0, 0, 0
	b.draining, b.stopped = false, 0
	for i := range b.cmds {
		b.cmds[i].lat.Reset()
		b.cmds[i] = commandState{lat: b.cmds[i].lat}
	}
	for _, l := range b.loops {
		l.restart, l.kick, l.stopped = true, false, false
		l.replies = 0
		clear(l.cmdDone)
	}
	// Requests still in flight belong to the old window now.
	b.all.Reset()
	b.replies, b.errors, b.connFails = 0, 0, 0
	if len(b.loops) > 1 {
		for _, l := range b.loops {
			l.wake(0)
		}
	}
}

// Stats returns the figures at now. Every configured command has its
// figures from the start, zero until its test runs.
func (b *Benchmark) Stats(now time.Duration) BenchStats {
	s := BenchStats{Commands: make(map[string]CommandResult, len(b.cmds)), Requests: b.replies,
		Outstanding: uint64(b.inFlight), Errors: b.errors, ConnectFailures: b.connFails, Finished: b.phase >= len(b.cmds)}
	for _, l := range b.loops {
		ts := ThreadStats{Clients: l.share, Requests: l.replies, Commands: make(map[string]uint64, len(b.cmds))}
		for _, bc := range l.clients {
			if bc.open {
				ts.Connected++
			}
		}
		for i, name := range b.cfg.Commands {
			ts.Commands[name] = l.cmdDone[i]
		}
		s.Connected += ts.Connected
		s.Threads = append(s.Threads, ts)
	}
	for i, name := range b.cfg.Commands {
		st := &b.cmds[i]
		r := CommandResult{Requests: st.done, Outstanding: uint64(st.outstanding), Finished: st.finished}
		if st.done > 0 {
			sum := st.lat.Summary()
			r.AvgMS, r.P50MS, r.P99MS, r.MaxMS = sum.MeanUS/1e3, sum.P50US/1e3, sum.P99US/1e3, sum.MaxUS/1e3
		}
		end := now
		if st.finished {
			end = st.end
			r.StopWaitMS = float64(st.end-st.lastReply) / float64(time.Millisecond)
		}
		if st.running || st.finished {
			if d := end - st.start; d > 0 {
				r.RPS = float64(st.done) / d.Seconds()
			}
			r.RPSToLastReply = r.RPS
			if d := st.lastReply - st.start; st.finished && d > 0 {
				r.RPSToLastReply = float64(st.done) / d.Seconds()
			}
		}
		s.Commands[name] = r
	}
	sum := b.all.Summary()
	s.AvgMS, s.P99MS = sum.MeanUS/1e3, sum.P99US/1e3
	return s
}

// Requests returns the replies received in the window, as Stats does,
// without the latency summaries (the rig samples it as the run goes).
func (b *Benchmark) Requests() uint64 { return b.replies }

// Active returns when the generator sent its first request of the
// window and, once every test finished, when the last one did.
func (b *Benchmark) Active() (start, end time.Duration, started, finished bool) {
	if len(b.cmds) == 0 || !(b.cmds[0].running || b.cmds[0].finished) {
		return 0, 0, false, false
	}
	last := b.cmds[len(b.cmds)-1]
	return b.cmds[0].start, last.end, true, last.finished
}

// startPhase begins the current test on thread l, the first to find it
// not running: every connected client of l sends, and the other threads
// are woken to send theirs. A thread that finds it running (after a
// warm-up each thread restarts it) sends its own clients'.
func (b *Benchmark) startPhase(m hw.Meter, l *BenchThread) {
	if b.phase >= len(b.cmds) {
		return
	}
	st := &b.cmds[b.phase]
	if st.running {
		l.sendAll(m)
		return
	}
	if !b.anyOpen() {
		return // the first client to connect starts it
	}
	st.running, st.start = true, m.Now()
	b.sent, b.done = 0, 0
	l.sendAll(m)
	for _, o := range b.loops {
		if o != l {
			o.kick = true
			o.wake(m.Now())
		}
	}
}

// anyOpen says some thread has a connected client.
func (b *Benchmark) anyOpen() bool {
	for _, l := range b.loops {
		for _, bc := range l.clients {
			if bc.open {
				return true
			}
		}
	}
	return false
}

// lastReply is the running test's last reply, received by thread l: l
// stops its loop now (clientDone's freeClient calls aeStop), the others
// at their first throughput tick from now (showThroughput).
func (b *Benchmark) lastReply(m hw.Meter, l *BenchThread) {
	st := &b.cmds[b.phase]
	now := m.Now()
	st.lastReply = now
	b.draining = true
	if len(b.loops) > 1 {
		ticks := (now - st.start + throughputTick - 1) / throughputTick
		at := st.start + ticks*throughputTick
		for _, o := range b.loops {
			if o != l && !o.stopped {
				o.stopAt = at
				o.wake(at)
			}
		}
	}
	l.stop(m)
}

// threadStopped counts thread l's loop stopped; the last to stop ends
// the test (benchmark() joins its threads), and the next starts on l.
func (b *Benchmark) threadStopped(m hw.Meter, l *BenchThread) {
	b.stopped++
	if b.stopped < len(b.loops) {
		return
	}
	st := &b.cmds[b.phase]
	st.running, st.finished, st.end = false, true, m.Now()
	b.phase++
	b.draining, b.stopped = false, 0
	for _, o := range b.loops {
		o.stopped = false
	}
	b.startPhase(m, l)
}
