package redis

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// BenchConfig are redis-benchmark's knobs that matter here.
type BenchConfig struct {
	// Clients is the number of connections (-c), default 50.
	Clients int `yaml:"clients"`
	// Requests is the number of requests per command (-n), default 100000.
	Requests int `yaml:"requests"`
	// Commands are the tests run one after the other (-t), default
	// PING, SET, GET.
	Commands []string `yaml:"commands"`
	// DataSize is the value size of SET (-d), default 3 bytes.
	DataSize int `yaml:"data_size"`
	// Pipeline is the requests in flight per connection (-P), default 1.
	Pipeline int `yaml:"pipeline"`
	// Threads is the event-loop threads (--threads, since Redis 6.0),
	// default 1: redis-benchmark's one ae loop serves every client
	// (redis-benchmark.c), so one core pays all its work. Several
	// threads are not modelled yet and are refused.
	Threads int `yaml:"threads"`
}

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
	case c.Threads < 0 || c.Threads > 1:
		return fmt.Errorf("threads: %d; only redis-benchmark's default, one thread, is modelled", c.Threads)
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
	// request to its last reply, or to now while it runs.
	RPS   float64 `json:"rps"`
	AvgMS float64 `json:"avg_ms"`
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
	// Outstanding are the test's requests sent and not answered.
	Outstanding uint64 `json:"outstanding"`
	// Finished says the test got all its replies in the window.
	Finished bool `json:"finished"`
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
}

// Benchmark is a redis-benchmark: its one ae thread as an event loop on
// a stack instance's lcore (NewBenchmark) or on a core of its own
// (NewThreadBenchmark).
type Benchmark struct {
	cfg BenchConfig
	net benchNet

	clients []*benchClient
	dead    int // clients failed this turn, still in clients
	events  []benchEvent
	// armed are the clients whose requests wait for the next turn's
	// writable event (send), and writing those taken this turn.
	armed, writing []*benchClient
	value          []byte

	// opened counts connections started; connecting those not yet
	// established.
	opened, connecting int

	// epoch numbers the measured windows: ResetStats starts a new one,
	// and replies to requests of an older one count only in the totals.
	epoch uint32
	// restart asks the next Poll to start the tests again (ResetStats
	// has no meter to send with).
	restart bool
	// phase is the test running; sent and done count its requests sent
	// and answered in this epoch.
	phase      int
	sent, done int
	cmds       []commandState
	all        *latency.Recorder
	replies    uint64 // every reply in the window
	inFlight   int    // every request sent and not answered
	errors     uint64
	connFails  uint64
	started    bool
}

// commandState is one test's progress in the current epoch.
type commandState struct {
	lat         *latency.Recorder
	done        uint64
	outstanding int
	start, end  time.Duration
	running     bool
	finished    bool
}

type benchClient struct {
	// c is the connection of a generator on the stack's lcore, s the
	// socket of one on a thread of its own.
	c      *tcp.Conn
	s      *lstack.Socket
	open   bool
	closed bool
	armed  bool // on Benchmark.armed: requests built, not yet written
	// inflight are the requests sent and not answered, oldest first,
	// from head on.
	inflight []request
	head     int
	rbuf     []byte
	wbuf     []byte
}

// request is one request in flight.
type request struct {
	at    time.Duration
	cmd   int
	epoch uint32
	// unsent: built and waiting for the writable event; at is then
	// set when it is written.
	unsent bool
}

// NewBenchmark returns a generator on in against remote. port gives the
// local port of connection i (0: let the stack choose); the wiring uses it
// to pick ports whose replies RSS steers back to this instance's queue.
// Its connections report to an event set of its own.
func NewBenchmark(cfg BenchConfig, in *lstack.Instance, remote tcp.Addr, port func(i int) uint16) (*Benchmark, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newBenchmark(cfg, &lcoreNet{in: in, set: in.NewEventSet(), remote: remote, port: port}), nil
}

// NewThreadBenchmark returns a generator whose thread runs on a core of
// its own, off the stack's lcores (on a kernel host, off the CPUs that
// take the NIC's interrupts), against remote: its connections cross to
// the stack threads through net's bridges, as redis-server's thread's
// do (ThreadServer). Attach it to its core; net.Wake is that core's
// doorbell.
func NewThreadBenchmark(cfg BenchConfig, net ThreadNet, remote tcp.Addr) (*Benchmark, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(net.Bridges) == 0 || net.Wake == nil {
		return nil, errors.New("redis-benchmark: a thread of its own needs at least one bridge and its core's doorbell")
	}
	ep := lstack.NewEpoll(net.Bridges[0].Instance())
	return newBenchmark(cfg, &threadNet{cfg: net, remote: remote, ep: ep,
		socks: map[*lstack.Socket]*benchClient{}, buf: make([]byte, readLen)}), nil
}

func newBenchmark(cfg BenchConfig, n benchNet) *Benchmark {
	cfg = cfg.withDefaults()
	b := &Benchmark{cfg: cfg, net: n,
		value: []byte(strings.Repeat("x", cfg.DataSize)), all: latency.New()}
	for range cfg.Commands {
		b.cmds = append(b.cmds, commandState{lat: latency.New()})
	}
	return b
}

// Latency returns the recorder of the latency of every request sent in
// the window, for plots.
func (b *Benchmark) Latency() *latency.Recorder { return b.all }

// ResetStats starts a measured window: the tests start again from the
// first command on the connections already open (see the package
// documentation), and every figure counts from now.
func (b *Benchmark) ResetStats() {
	b.epoch++
	b.restart = true
	b.phase, b.sent, b.done = 0, 0, 0
	for i := range b.cmds {
		b.cmds[i].lat.Reset()
		b.cmds[i] = commandState{lat: b.cmds[i].lat}
	}
	// Requests still in flight belong to the old window now.
	b.all.Reset()
	b.replies, b.errors, b.connFails = 0, 0, 0
}

// Stats returns the figures at now. Every configured command has its
// figures from the start, zero until its test runs.
func (b *Benchmark) Stats(now time.Duration) BenchStats {
	s := BenchStats{Commands: make(map[string]CommandResult, len(b.cmds)), Requests: b.replies,
		Outstanding: uint64(b.inFlight), Errors: b.errors, ConnectFailures: b.connFails, Finished: b.phase >= len(b.cmds)}
	for _, bc := range b.clients {
		if bc.open {
			s.Connected++
		}
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
		}
		if st.running || st.finished {
			if d := end - st.start; d > 0 {
				r.RPS = float64(st.done) / d.Seconds()
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

// Poll runs one turn of the generator's event loop.
func (b *Benchmark) Poll(m hw.Meter) (bool, time.Duration) {
	if !b.started {
		b.started = true
		b.connect(m)
		return true, hw.NoDeadline
	}
	worked := false
	if b.restart {
		b.restart = false
		b.startPhase(m)
		worked = true
	}
	b.events = b.net.ready(m, b.events[:0], len(b.armed) > 0)
	if b.writeArmed(m) {
		worked = true
	}
	for _, ev := range b.events {
		bc := ev.bc
		if bc.closed {
			continue
		}
		worked = true
		if ev.failed {
			b.fail(m, bc)
			continue
		}
		if !bc.open && b.net.connected(bc) {
			bc.open = true
			b.connecting--
			b.connect(m)
			// Each client starts as soon as it is connected, as the
			// real tool's do: one slow handshake holds up nobody.
			switch {
			case b.phase >= len(b.cmds):
			case !b.cmds[b.phase].running:
				b.startPhase(m)
			default:
				b.send(m, bc)
			}
		}
		if ev.readable {
			b.receive(m, bc)
			if bc.closed {
				continue
			}
		}
		if ev.writable && !bc.closed {
			b.flush(m, bc)
		}
	}
	if b.dead > 0 {
		b.clients = slices.DeleteFunc(b.clients, func(bc *benchClient) bool { return bc.closed })
		b.dead = 0
	}
	// Writes armed this turn go out in the next: the loop must not
	// sleep with them.
	worked = worked || len(b.armed) > 0
	b.net.done(m, worked)
	return worked, hw.NoDeadline
}

// writeArmed is the writable events of the turn: each client armed in
// an earlier turn writes its requests (redis-benchmark.c writeHandler)
// and starts their clocks, as writeHandler sets c->start when it writes
// a request's first byte. redis-benchmark's latency therefore leaves out
// the time a request waited for its writable event, behind the other
// clients' events of the turn that armed it; so does this one.
func (b *Benchmark) writeArmed(m hw.Meter) bool {
	if len(b.armed) == 0 {
		return false
	}
	b.writing, b.armed = b.armed, b.writing[:0]
	now := m.Now()
	for _, bc := range b.writing {
		bc.armed = false
		if bc.closed {
			continue
		}
		for i := bc.head; i < len(bc.inflight); i++ {
			if bc.inflight[i].unsent {
				bc.inflight[i].at, bc.inflight[i].unsent = now, false
			}
		}
		b.flush(m, bc)
	}
	clear(b.writing)
	b.writing = b.writing[:0]
	return true
}

// maxConnecting bounds handshakes in flight while the clients connect,
// so that a thousand SYNs do not overflow the neighbour cache's queue
// or the server's SYN backlog before the first one is answered (the real
// tool's clients are created one after another, each costing a
// connect(2) and a first write, which spreads them out the same way).
const maxConnecting = 64

// connect starts connections until maxConnecting are in flight.
func (b *Benchmark) connect(m hw.Meter) {
	for b.opened < b.cfg.Clients && b.connecting < maxConnecting {
		i := b.opened
		b.opened++
		bc := &benchClient{}
		if err := b.net.connect(m, i, bc); err != nil {
			b.connFails++
			continue
		}
		b.clients = append(b.clients, bc)
		b.connecting++
	}
}

// fail drops a client whose connection failed. Its unanswered requests
// of the running test are given back, for the other clients to send.
func (b *Benchmark) fail(m hw.Meter, bc *benchClient) {
	if bc.closed {
		return
	}
	b.errors++
	if !bc.open {
		b.connecting--
		b.connFails++
	}
	bc.closed, bc.open = true, false
	for _, r := range bc.inflight[bc.head:] {
		b.inFlight--
		if r.epoch == b.epoch {
			b.cmds[r.cmd].outstanding--
			if r.cmd == b.phase {
				b.sent--
			}
		}
	}
	bc.inflight, bc.head = nil, 0
	b.dead++ // taken out of clients after the turn's events
	b.net.close(m, bc)
	b.connect(m)
	if b.phase < len(b.cmds) && b.cmds[b.phase].running {
		for _, other := range b.clients {
			if other.open {
				b.send(m, other)
			}
		}
	}
}

// startPhase begins the current test: every connected client sends.
func (b *Benchmark) startPhase(m hw.Meter) {
	if b.phase >= len(b.cmds) {
		return
	}
	open := false
	for _, bc := range b.clients {
		open = open || bc.open
	}
	if !open {
		return // the first client to connect starts it
	}
	st := &b.cmds[b.phase]
	st.running, st.start = true, m.Now()
	b.sent, b.done = 0, 0
	for _, bc := range b.clients {
		if bc.open {
			b.send(m, bc)
		}
	}
}

// send fills the client's pipeline with the running test's requests.
func (b *Benchmark) send(m hw.Meter, bc *benchClient) {
	if b.phase >= len(b.cmds) || !b.cmds[b.phase].running {
		return
	}
	now := m.Now()
	sent := false
	for len(bc.inflight)-bc.head < b.cfg.Pipeline && b.sent < b.cfg.Requests {
		bc.wbuf = b.command(bc.wbuf, b.cfg.Commands[b.phase])
		m.Charge(CostBenchRequest, 1)
		bc.inflight = append(bc.inflight, request{at: now, cmd: b.phase, epoch: b.epoch, unsent: true})
		b.sent++
		b.inFlight++
		b.cmds[b.phase].outstanding++
		sent = true
	}
	if sent {
		// redis-benchmark.c switches the socket to writable for the
		// batch (resetClient: delete writable, delete readable, create
		// writable) and back to readable once it is written
		// (writeHandler: delete writable, create readable); ae.c's
		// aeCreateFileEvent and aeDeleteFileEvent are an epoll_ctl each.
		// The write waits for the writable event, in the next turn of
		// the loop (writeArmed): strace -c counts two epoll_wait calls a
		// request at one client, one for each event.
		b.net.control(m, benchEpollCtls)
		if !bc.armed {
			bc.armed = true
			b.armed = append(b.armed, bc)
		}
	}
}

// benchEpollCtls is the epoll_ctl calls redis-benchmark makes per
// pipeline of requests (see send).
const benchEpollCtls = 5

func (b *Benchmark) command(dst []byte, name string) []byte {
	switch name {
	case "SET":
		return resp.AppendCommand(dst, []byte("SET"), []byte("key:__rand_int__"), b.value)
	case "GET":
		return resp.AppendCommand(dst, []byte("GET"), []byte("key:__rand_int__"))
	case "INCR":
		return resp.AppendCommand(dst, []byte("INCR"), []byte("counter:__rand_int__"))
	}
	return resp.AppendCommand(dst, []byte("PING"))
}

func (b *Benchmark) flush(m hw.Meter, bc *benchClient) {
	rest, err := b.net.write(m, bc, bc.wbuf)
	switch {
	case err != nil:
		b.fail(m, bc)
	case len(rest) == 0:
		bc.wbuf = bc.wbuf[:0]
	default:
		bc.wbuf = append(bc.wbuf[:0], rest...)
	}
}

func (b *Benchmark) receive(m hw.Meter, bc *benchClient) {
	var err error
	if bc.rbuf, err = b.net.read(m, bc, bc.rbuf); err != nil {
		b.fail(m, bc)
		return
	}
	now := m.Now()
	off := 0
	ended := false
	for bc.head < len(bc.inflight) {
		kind, n, err := resp.SkipReply(bc.rbuf[off:])
		if errors.Is(err, resp.ErrIncomplete) {
			break
		}
		if err != nil {
			b.fail(m, bc)
			return
		}
		if kind == resp.ErrorReply {
			b.errors++
		}
		off += n
		// hiredis's reader scans the reply and builds a reply object
		// that readHandler records and frees (redis-benchmark.c).
		m.Charge(appcost.ParseByte, int64(n))
		m.Charge(CostBenchReply, 1)
		r := bc.inflight[bc.head]
		bc.head++
		b.inFlight--
		b.replies++
		if r.epoch != b.epoch {
			continue // sent before the window: only the total counts it
		}
		st := &b.cmds[r.cmd]
		st.outstanding--
		d := now - r.at
		st.lat.Record(d)
		b.all.Record(d)
		st.done++
		if r.cmd == b.phase {
			b.done++
			if b.done >= b.cfg.Requests {
				ended = true
			}
		}
	}
	if bc.head == len(bc.inflight) {
		bc.inflight, bc.head = bc.inflight[:0], 0
	} else if bc.head > len(bc.inflight)/2 {
		n := copy(bc.inflight, bc.inflight[bc.head:])
		bc.inflight, bc.head = bc.inflight[:n], 0
	}
	bc.rbuf = append(bc.rbuf[:0], bc.rbuf[off:]...)
	if ended {
		b.endPhase(m)
		return
	}
	b.send(m, bc)
}

// endPhase finishes the running test and starts the next.
func (b *Benchmark) endPhase(m hw.Meter) {
	st := &b.cmds[b.phase]
	st.running, st.finished, st.end = false, true, m.Now()
	b.phase++
	b.startPhase(m)
}
