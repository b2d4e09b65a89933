package oltp

import (
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/apps/appcost"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// ClientConfig are benchmarksql 5.0's knobs that matter here (its
// props file's names in parentheses).
type ClientConfig struct {
	// Terminals is the number of terminals, each one connection running
	// one transaction after another (terminals), default 100.
	Terminals int `yaml:"terminals"`
	// Warehouses is the database's scale (warehouses), default one per
	// ten terminals, the most terminals benchmarksql allows per
	// warehouse. Terminal i's home warehouse is i mod warehouses + 1.
	Warehouses int `yaml:"warehouses"`
	// Weights is the transaction mix (newOrderWeight ...), default
	// TPC-C's 45/43/4/4/4.
	Weights *Weights `yaml:"weights"`
	// KeyingTime and ThinkTime are the pauses before and after each
	// transaction (TPC-C clause 5.2.5); benchmarksql's throughput runs
	// use none, the default.
	KeyingTime time.Duration `yaml:"keying_time"`
	ThinkTime  time.Duration `yaml:"think_time"`
}

// Validate checks the configuration; errors name the key.
func (c *ClientConfig) Validate() error {
	switch {
	case c.Terminals < 0 || c.Terminals > 20000:
		return fmt.Errorf("terminals: %d is outside 1..20000", c.Terminals)
	case c.Warehouses < 0 || c.Warehouses > 100000:
		return fmt.Errorf("warehouses: %d is outside 1..100000", c.Warehouses)
	case c.KeyingTime < 0 || c.KeyingTime > time.Minute:
		return fmt.Errorf("keying_time: %v is outside 0..1m", c.KeyingTime)
	case c.ThinkTime < 0 || c.ThinkTime > time.Minute:
		return fmt.Errorf("think_time: %v is outside 0..1m", c.ThinkTime)
	}
	if c.Weights != nil {
		return c.Weights.Validate()
	}
	return nil
}

func (c ClientConfig) withDefaults() ClientConfig {
	if c.Terminals == 0 {
		c.Terminals = 100
	}
	if c.Warehouses == 0 {
		c.Warehouses = max(1, (c.Terminals+9)/10)
	}
	if c.Weights == nil {
		w := DefaultWeights()
		c.Weights = &w
	}
	return c
}

// TxnStats are one transaction type's figures.
type TxnStats struct {
	Count uint64  `json:"count"`
	Share float64 `json:"share"`
	// Statements is the mean statements per transaction.
	Statements float64 `json:"statements"`
	AvgMS      float64 `json:"avg_ms"`
	P50MS      float64 `json:"p50_ms"`
	P90MS      float64 `json:"p90_ms"`
	P99MS      float64 `json:"p99_ms"`
	MaxMS      float64 `json:"max_ms"`
}

// ClientStats are benchmarksql's figures over the measured window, with
// the statement rate the Gazelle article quotes.
type ClientStats struct {
	// QPS is statements answered per second (COMMIT included, as MySQL's
	// Queries counter counts them).
	QPS float64 `json:"qps"`
	// TPS is transactions per second; TpmC New-Order transactions per
	// minute (benchmarksql's tpmC); TpmTotal all transactions per minute.
	TPS      float64 `json:"tps"`
	TpmC     float64 `json:"tpmc"`
	TpmTotal float64 `json:"tpm_total"`
	// Statements and Transactions count what completed in the window.
	Statements   uint64 `json:"statements"`
	Transactions uint64 `json:"transactions"`
	// StatementAvgMS and StatementP99MS are one statement's round trip.
	StatementAvgMS float64 `json:"statement_avg_ms"`
	StatementP99MS float64 `json:"statement_p99_ms"`
	// AvgMS and P99MS are over all transactions.
	AvgMS float64 `json:"avg_ms"`
	P99MS float64 `json:"p99_ms"`
	// Errors counts ERR responses; ProtocolErrors responses that did not
	// parse; ConnectFailures connections that failed to open;
	// Disconnects terminals whose connection ended.
	Errors          uint64 `json:"errors"`
	ProtocolErrors  uint64 `json:"protocol_errors"`
	ConnectFailures uint64 `json:"connect_failures"`
	Disconnects     uint64 `json:"disconnects"`
	// Terminals counts terminals connected now.
	Terminals int `json:"terminals"`
	// Outstanding are the statements sent and not answered now (the
	// window's end cuts them); Lost those whose connection ended before
	// their response came.
	Outstanding uint64 `json:"outstanding"`
	Lost        uint64 `json:"lost"`
	// Aborted counts transactions given up after an error (a deadlock's
	// ER 1213): the terminal sends ROLLBACK and starts the next one, as
	// benchmarksql does; they count in no transaction figure.
	Aborted uint64 `json:"aborted"`
	// Txn are the per-type figures.
	Txn map[string]TxnStats `json:"txn"`
}

// Client is benchmarksql: terminals spread over the client's stack
// instances, each site an event loop on its instance's lcore.
type Client struct {
	cfg   ClientConfig
	sites []*Site
	gen   *txnGen
	rng   *rand.Rand

	since      time.Duration
	statements uint64
	stmtWords  [numTxnTypes]uint64
	counts     [numTxnTypes]uint64
	lat        [numTxnTypes]*latency.Recorder
	all        *latency.Recorder
	stmtLat    *latency.Recorder
	errors     uint64
	protoErrs  uint64
	connFails  uint64
	disconnect uint64
	lost       uint64
	aborted    uint64
	connected  int
	// outstanding counts statements in flight over every terminal.
	outstanding int
}

// Endpoint is one client stack instance with the server's address and a
// picker of local ports whose replies reach that instance (RSS).
type Endpoint struct {
	Instance *lstack.Instance
	Remote   tcp.Addr
	Port     func(i int) uint16
}

// NewClient returns a client with one site per endpoint; terminals are
// dealt round-robin over them. rng draws the mix and the parameters.
func NewClient(cfg ClientConfig, eps []Endpoint, rng *rand.Rand) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(eps) == 0 || rng == nil {
		return nil, errors.New("oltp: a client needs at least one endpoint and a random source")
	}
	cfg = cfg.withDefaults()
	c := &Client{cfg: cfg, rng: rng, gen: newTxnGen(rng, cfg.Warehouses), all: latency.New(), stmtLat: latency.New()}
	for i := range c.lat {
		c.lat[i] = latency.New()
	}
	for _, ep := range eps {
		// Each site's connections report to an event set of its own:
		// other applications on the instance do not see their events.
		c.sites = append(c.sites, &Site{cl: c, ep: ep, set: ep.Instance.NewEventSet()})
	}
	for i := 0; i < cfg.Terminals; i++ {
		s := c.sites[i%len(c.sites)]
		s.terms = append(s.terms, &terminal{site: s, home: i%cfg.Warehouses + 1})
	}
	return c, nil
}

// Sites returns the pollers, one per endpoint, to attach to their
// instances' lcores.
func (c *Client) Sites() []*Site { return c.sites }

// Statements returns the statements answered since the last ResetStats.
func (c *Client) Statements() uint64 { return c.statements }

// Latency returns the recorder of every transaction's latency.
func (c *Client) Latency() *latency.Recorder { return c.all }

// ResetStats starts a new measurement window at now.
func (c *Client) ResetStats(now time.Duration) {
	c.since = now
	c.statements = 0
	c.counts = [numTxnTypes]uint64{}
	c.stmtWords = [numTxnTypes]uint64{}
	for _, r := range c.lat {
		r.Reset()
	}
	c.all.Reset()
	c.stmtLat.Reset()
	c.errors, c.protoErrs, c.connFails, c.disconnect, c.lost, c.aborted = 0, 0, 0, 0, 0, 0
}

// Stats returns the figures of the window ending at now.
func (c *Client) Stats(now time.Duration) ClientStats {
	s := ClientStats{Statements: c.statements, Errors: c.errors, ProtocolErrors: c.protoErrs,
		ConnectFailures: c.connFails, Disconnects: c.disconnect, Terminals: c.connected, Txn: map[string]TxnStats{},
		Outstanding: uint64(c.outstanding), Lost: c.lost, Aborted: c.aborted}
	for _, n := range c.counts {
		s.Transactions += n
	}
	if w := (now - c.since).Seconds(); w > 0 {
		s.QPS = float64(s.Statements) / w
		s.TPS = float64(s.Transactions) / w
		s.TpmC = float64(c.counts[NewOrder]) / w * 60
		s.TpmTotal = s.TPS * 60
	}
	sum := c.all.Summary()
	s.AvgMS, s.P99MS = sum.MeanUS/1e3, sum.P99US/1e3
	ss := c.stmtLat.Summary()
	s.StatementAvgMS, s.StatementP99MS = ss.MeanUS/1e3, ss.P99US/1e3
	for t := TxnType(0); t < numTxnTypes; t++ {
		ts := TxnStats{Count: c.counts[t]}
		if s.Transactions > 0 {
			ts.Share = float64(ts.Count) / float64(s.Transactions)
		}
		if ts.Count > 0 {
			ts.Statements = float64(c.stmtWords[t]) / float64(ts.Count)
		}
		l := c.lat[t].Summary()
		ts.AvgMS, ts.P50MS, ts.P90MS, ts.P99MS, ts.MaxMS = l.MeanUS/1e3, l.P50US/1e3, l.P90US/1e3, l.P99US/1e3, l.MaxUS/1e3
		s.Txn[t.String()] = ts
	}
	return s
}

// terminal is one benchmarksql terminal.
type terminal struct {
	site   *Site
	c      *tcp.Conn
	open   bool
	asking bool // a statement is in flight
	home   int
	typ    TxnType
	stmts  []string
	next   int
	start  time.Duration // of the transaction
	sentAt time.Duration // of the statement in flight
	resume time.Duration // end of a keying or think pause
	rbuf   []byte
	wbuf   []byte
	// resp holds the parse state of the response at the start of rbuf,
	// kept while it arrives.
	resp responseParser
	// aborted says the transaction failed and its ROLLBACK is in flight.
	aborted bool
}

// Site is the client's event loop on one instance.
type Site struct {
	cl      *Client
	ep      Endpoint
	terms   []*terminal
	set     *lstack.EventSet
	events  []tcp.Event
	opened  int
	inConn  int
	paused  []*terminal
	started bool
}

// maxConnecting bounds handshakes in flight per site while terminals
// connect (benchmarksql opens its connections one after another).
const maxConnecting = 64

// Poll runs one turn of the site's event loop.
func (s *Site) Poll(m hw.Meter) (bool, time.Duration) {
	worked := false
	if !s.started {
		s.started = true
		worked = true
	}
	s.connect(m)
	next := s.resumePaused(m)
	s.events = s.set.Events(s.events[:0])
	for _, ev := range s.events {
		t := ev.Data.(*terminal)
		if t.c != ev.Conn {
			continue // its connection failed
		}
		worked = true
		if ev.Mask&tcp.EventError != 0 {
			s.fail(m, t)
			continue
		}
		if !t.open && ev.Conn.Connected() {
			t.open = true
			s.inConn--
			s.cl.connected++
			s.connect(m)
			s.begin(m, t)
		}
		if ev.Mask&(tcp.EventReadable|tcp.EventHangup) != 0 {
			s.receive(m, t)
		}
		if ev.Mask&tcp.EventWritable != 0 && len(t.wbuf) > 0 && t.c != nil {
			s.flush(m, t)
		}
	}
	s.set.Wait(m, worked)
	return worked, next
}

func (s *Site) connect(m hw.Meter) {
	for s.opened < len(s.terms) && s.inConn < maxConnecting {
		t := s.terms[s.opened]
		var lp uint16
		if s.ep.Port != nil {
			lp = s.ep.Port(s.opened)
		}
		s.opened++
		c, err := s.set.Connect(m, lp, s.ep.Remote, t)
		if err != nil {
			s.cl.connFails++
			continue
		}
		c.SetNoDelay(true) // Connector/J's tcpNoDelay defaults to true
		t.c = c
		s.inConn++
	}
}

// resumePaused starts the transactions of terminals whose pause is over
// and returns the earliest pause still running.
func (s *Site) resumePaused(m hw.Meter) time.Duration {
	next := hw.NoDeadline
	if len(s.paused) == 0 {
		return next
	}
	now := m.Now()
	keep := s.paused[:0]
	for _, t := range s.paused {
		if t.resume <= now {
			s.start(m, t)
			continue
		}
		keep = append(keep, t)
		next = min(next, t.resume)
	}
	clear(s.paused[len(keep):])
	s.paused = keep
	return next
}

// begin starts the terminal's next transaction, after the keying time.
func (s *Site) begin(m hw.Meter, t *terminal) {
	t.typ = s.cl.cfg.Weights.pick(s.cl.rng)
	t.stmts = s.cl.gen.build(t.typ, t.home)
	t.next = 0
	if d := s.cl.cfg.KeyingTime; d > 0 {
		s.pause(m, t, d)
		return
	}
	s.start(m, t)
}

func (s *Site) pause(m hw.Meter, t *terminal, d time.Duration) {
	t.resume = m.Now() + d
	s.paused = append(s.paused, t)
}

func (s *Site) start(m hw.Meter, t *terminal) {
	if t.c == nil {
		return // its connection failed while it paused
	}
	t.start = m.Now()
	s.send(m, t)
}

// send sends the terminal's next statement.
func (s *Site) send(m hw.Meter, t *terminal) {
	t.sentAt = m.Now()
	t.asking = true
	s.cl.outstanding++
	t.wbuf = AppendQuery(t.wbuf, []byte(t.stmts[t.next]))
	m.Charge(appcost.OLTPClientStatement, 1)
	t.next++
	s.flush(m, t)
}

func (s *Site) flush(m hw.Meter, t *terminal) {
	rest, err := s.ep.Instance.WriteAvailable(m, t.c, t.wbuf)
	switch {
	case err != nil:
		s.fail(m, t)
	case len(rest) == 0:
		t.wbuf = t.wbuf[:0]
	default:
		t.wbuf = append(t.wbuf[:0], rest...)
	}
}

func (s *Site) receive(m hw.Meter, t *terminal) {
	var eof bool
	var err error
	t.rbuf, eof, err = s.ep.Instance.ReadAvailable(m, t.c, t.rbuf)
	if err != nil {
		s.fail(m, t)
		return
	}
	off := 0
	for off < len(t.rbuf) {
		r, n, err := t.resp.parse(t.rbuf[off:])
		if errors.Is(err, ErrIncomplete) {
			break
		}
		if err != nil {
			s.cl.protoErrs++
			s.fail(m, t)
			return
		}
		m.Charge(appcost.ParseByte, int64(n))
		m.Charge(appcost.OLTPClientResult, 1)
		off += n
		s.answered(m, t, r)
	}
	if off > 0 { // nothing moves while a response is still arriving
		t.resp.work += uint64(len(t.rbuf) - off)
		t.rbuf = append(t.rbuf[:0], t.rbuf[off:]...)
	}
	if eof {
		s.fail(m, t)
	}
}

// answered records a statement's response and moves the transaction on.
func (s *Site) answered(m hw.Meter, t *terminal, r Response) {
	now := m.Now()
	cl := s.cl
	if t.asking {
		t.asking = false
		cl.outstanding--
	}
	cl.statements++
	cl.stmtLat.Record(now - t.sentAt)
	if r.Kind == ResponseError {
		cl.errors++
		if !t.aborted {
			// The transaction is lost: roll back, then go on.
			t.aborted = true
			t.stmts = append(t.stmts[:t.next], "ROLLBACK")
		}
	}
	if t.next < len(t.stmts) {
		s.send(m, t)
		return
	}
	if t.aborted {
		t.aborted = false
		cl.aborted++
		s.begin(m, t)
		return
	}
	cl.counts[t.typ]++
	cl.stmtWords[t.typ] += uint64(len(t.stmts))
	d := now - t.start
	cl.lat[t.typ].Record(d)
	cl.all.Record(d)
	if th := cl.cfg.ThinkTime; th > 0 {
		t.typ = cl.cfg.Weights.pick(cl.rng)
		t.stmts = cl.gen.build(t.typ, t.home)
		t.next = 0
		s.pause(m, t, th+cl.cfg.KeyingTime)
		return
	}
	s.begin(m, t)
}

func (s *Site) fail(m hw.Meter, t *terminal) {
	if t.c == nil {
		return
	}
	if t.open {
		s.cl.connected--
		s.cl.disconnect++
	} else {
		s.inConn--
		s.cl.connFails++
	}
	if t.asking {
		t.asking = false
		s.cl.outstanding--
		s.cl.lost++
	}
	_ = s.ep.Instance.Close(m, t.c)
	t.c, t.open = nil, false
}
