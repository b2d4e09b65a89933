package redis

import (
	"errors"
	"fmt"
	"strings"
	"time"

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
	}
	for i, cmd := range c.Commands {
		switch strings.ToUpper(cmd) {
		case "PING", "SET", "GET", "INCR":
		default:
			return fmt.Errorf("commands[%d]: %q; expected PING, SET, GET or INCR", i, cmd)
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
	for i, cmd := range c.Commands {
		c.Commands[i] = strings.ToUpper(cmd)
	}
	return c
}

// CommandResult is one test's outcome, as redis-benchmark prints it.
type CommandResult struct {
	Requests uint64  `json:"requests"`
	RPS      float64 `json:"rps"`
	AvgMS    float64 `json:"avg_ms"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
	Finished bool    `json:"finished"`
}

// BenchStats are the generator's figures: one result per command, and
// the latency over all commands.
type BenchStats struct {
	Commands        map[string]CommandResult `json:"-"`
	AvgMS           float64                  `json:"avg_ms"`
	P99MS           float64                  `json:"p99_ms"`
	Errors          uint64                   `json:"errors"`
	ConnectFailures uint64                   `json:"connect_failures"`
	Finished        bool                     `json:"finished"`
}

// Benchmark is a redis-benchmark on one stack instance.
type Benchmark struct {
	cfg    BenchConfig
	in     *lstack.Instance
	remote tcp.Addr
	port   func(i int) uint16

	clients []*benchClient
	byConn  map[*tcp.Conn]*benchClient
	events  []tcp.Event
	value   []byte

	// opened counts connections started; connecting those not yet
	// established.
	opened, connecting int

	phase      int
	phaseStart time.Duration
	sent, done int
	lat        []*latency.Recorder
	all        *latency.Recorder
	results    []CommandResult
	errors     uint64
	connFails  uint64
	started    bool
}

type benchClient struct {
	c      *tcp.Conn
	open   bool
	sentAt []time.Duration // send times of requests in flight, oldest first
	rbuf   []byte
	wbuf   []byte
}

// NewBenchmark returns a generator on in against remote. port gives the
// local port of connection i (0: let the stack choose); the wiring uses it
// to pick ports whose replies RSS steers back to this instance's queue.
func NewBenchmark(cfg BenchConfig, in *lstack.Instance, remote tcp.Addr, port func(i int) uint16) (*Benchmark, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	b := &Benchmark{cfg: cfg, in: in, remote: remote, port: port, byConn: map[*tcp.Conn]*benchClient{},
		value: []byte(strings.Repeat("x", cfg.DataSize)), all: latency.New()}
	for range cfg.Commands {
		b.lat = append(b.lat, latency.New())
		b.results = append(b.results, CommandResult{})
	}
	return b, nil
}

// Latency returns the recorder of every request's latency, for plots.
func (b *Benchmark) Latency() *latency.Recorder { return b.all }

// ResetStats does nothing: a benchmark measures its own phases by request
// count, as redis-benchmark does.
func (b *Benchmark) ResetStats() {}

// Stats returns the figures.
func (b *Benchmark) Stats() BenchStats {
	s := BenchStats{Commands: map[string]CommandResult{}, Errors: b.errors, ConnectFailures: b.connFails,
		Finished: b.phase >= len(b.cfg.Commands)}
	for i, name := range b.cfg.Commands {
		s.Commands[name] = b.results[i]
	}
	sum := b.all.Summary()
	s.AvgMS, s.P99MS = sum.MeanUS/1e3, sum.P99US/1e3
	return s
}

// Poll runs one turn of the generator's event loop.
func (b *Benchmark) Poll(m hw.Meter) (bool, time.Duration) {
	if !b.started {
		b.started = true
		b.connect(m)
		return true, hw.NoDeadline
	}
	b.events = b.in.TCP().Events(b.events[:0])
	worked := false
	for _, ev := range b.events {
		bc := b.byConn[ev.Conn]
		if bc == nil {
			continue
		}
		worked = true
		if ev.Mask&tcp.EventError != 0 {
			b.fail(m, bc)
			continue
		}
		if !bc.open && ev.Conn.Connected() {
			bc.open = true
			b.connecting--
			b.connect(m)
			if b.allOpen() {
				b.startPhase(m)
			}
		}
		if ev.Mask&(tcp.EventReadable|tcp.EventHangup) != 0 {
			b.receive(m, bc)
		}
		if ev.Mask&tcp.EventWritable != 0 {
			b.flush(m, bc)
		}
	}
	b.in.Wait(m, worked)
	return worked, hw.NoDeadline
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
		var lp uint16
		if b.port != nil {
			lp = b.port(b.opened)
		}
		b.opened++
		c, err := b.in.Connect(m, lp, b.remote)
		if err != nil {
			b.connFails++
			continue
		}
		c.SetNoDelay(true) // redis-benchmark's hiredis sets TCP_NODELAY
		bc := &benchClient{c: c}
		b.clients = append(b.clients, bc)
		b.byConn[c] = bc
		b.connecting++
	}
}

func (b *Benchmark) allOpen() bool {
	return b.opened == b.cfg.Clients && b.connecting == 0
}

func (b *Benchmark) fail(m hw.Meter, bc *benchClient) {
	b.errors++
	if !bc.open {
		b.connecting--
		b.connFails++
		b.connect(m)
	}
	delete(b.byConn, bc.c)
	for i, x := range b.clients {
		if x == bc {
			b.clients = append(b.clients[:i], b.clients[i+1:]...)
			break
		}
	}
	_ = b.in.Close(m, bc.c)
	if len(b.clients) > 0 && b.allOpen() && b.sent == 0 && b.phase < len(b.cfg.Commands) {
		b.startPhase(m)
	}
}

// startPhase begins the next command's test: every client sends.
func (b *Benchmark) startPhase(m hw.Meter) {
	if b.phase >= len(b.cfg.Commands) {
		return
	}
	b.phaseStart = m.Now()
	b.sent, b.done = 0, 0
	for _, bc := range b.clients {
		b.send(m, bc)
	}
}

// send fills the client's pipeline.
func (b *Benchmark) send(m hw.Meter, bc *benchClient) {
	now := m.Now()
	for len(bc.sentAt) < b.cfg.Pipeline && b.sent < b.cfg.Requests {
		bc.wbuf = b.command(bc.wbuf, b.cfg.Commands[b.phase])
		bc.sentAt = append(bc.sentAt, now)
		b.sent++
	}
	b.flush(m, bc)
}

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
	rest, err := b.in.WriteAvailable(m, bc.c, bc.wbuf)
	switch {
	case err != nil:
		b.fail(m, bc)
	case len(rest) == 0:
		bc.wbuf = bc.wbuf[:0]
	default:
		bc.wbuf = rest
	}
}

func (b *Benchmark) receive(m hw.Meter, bc *benchClient) {
	var err error
	if bc.rbuf, _, err = b.in.ReadAvailable(m, bc.c, bc.rbuf); err != nil {
		b.fail(m, bc)
		return
	}
	now := m.Now()
	off := 0
	for len(bc.sentAt) > 0 {
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
		d := now - bc.sentAt[0]
		bc.sentAt = bc.sentAt[1:]
		b.lat[b.phase].Record(d)
		b.all.Record(d)
		b.done++
	}
	bc.rbuf = append(bc.rbuf[:0], bc.rbuf[off:]...)
	if b.done >= b.cfg.Requests {
		b.endPhase(m)
		return
	}
	b.send(m, bc)
}

func (b *Benchmark) endPhase(m hw.Meter) {
	elapsed := m.Now() - b.phaseStart
	s := b.lat[b.phase].Summary()
	r := CommandResult{Requests: uint64(b.done), AvgMS: s.MeanUS / 1e3, P50MS: s.P50US / 1e3, P99MS: s.P99US / 1e3, MaxMS: s.MaxUS / 1e3, Finished: true}
	if elapsed > 0 {
		r.RPS = float64(b.done) / elapsed.Seconds()
	}
	b.results[b.phase] = r
	b.phase++
	b.startPhase(m)
}
