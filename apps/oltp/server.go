package oltp

import (
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/apps/appcost"
	"strconv"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// ServerConfig are the server's knobs.
type ServerConfig struct {
	// Port is the listening port, default 3306.
	Port uint16 `yaml:"port"`
	// Backlog is each instance's accept queue, default 1024.
	Backlog int `yaml:"backlog"`
	// MaxConnections is mysqld's max_connections, default 151 (MySQL
	// 8.0's default); a connection beyond it gets ER_CON_COUNT_ERROR
	// (1040) and is closed.
	MaxConnections int `yaml:"max_connections"`
	// Costs are the query engine's CPU time per statement class.
	Costs QueryCosts `yaml:"costs"`
}

// Validate checks the configuration; errors name the key.
func (c *ServerConfig) Validate() error {
	switch {
	case c.Backlog < 0 || c.Backlog > 65535:
		return fmt.Errorf("backlog: %d is outside 1..65535", c.Backlog)
	case c.MaxConnections < 0 || c.MaxConnections > 100000:
		return fmt.Errorf("max_connections: %d is outside 1..100000", c.MaxConnections)
	}
	return c.Costs.Validate()
}

func (c ServerConfig) withDefaults() ServerConfig {
	if c.Port == 0 {
		c.Port = 3306
	}
	if c.Backlog == 0 {
		c.Backlog = 1024
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = 151
	}
	c.Costs = c.Costs.withDefaults()
	return c
}

// ServerStats are the server's counters.
type ServerStats struct {
	// Queries counts statements executed (MySQL's Queries status
	// variable: every COM_QUERY, COMMIT included); ByClass splits them.
	Queries uint64            `json:"queries"`
	ByClass map[string]uint64 `json:"by_class"`
	// QPS is Queries over the measured window.
	QPS float64 `json:"qps"`
	// Connections counts connections accepted; Refused those turned
	// away at max_connections; Threads the threads running now.
	Connections uint64 `json:"connections"`
	Refused     uint64 `json:"refused"`
	Threads     int    `json:"threads"`
	// ProtocolErrors counts malformed packets (the connection is
	// closed); Unsupported commands answered with an error.
	ProtocolErrors uint64 `json:"protocol_errors"`
	Unsupported    uint64 `json:"unsupported"`
	// SendRetries counts replies the send ring could not take at once.
	SendRetries uint64 `json:"send_retries"`
	// QueryCPUUS is the query engine's CPU time, in microseconds.
	QueryCPUUS float64 `json:"query_cpu_us"`
}

// Server is mysqld in Gazelle's asymmetric model: a thread per connection
// (the one-thread-per-connection handler), scheduled on the server's
// application cores, each reading statements from its socket, executing
// them and writing the results, through the stack's routing table and
// rings (stack/lstack's Bridge and Socket).
type Server struct {
	cfg     ServerConfig
	sched   *Scheduler
	router  *lstack.Router
	threads map[int]*thread
	stats   ServerStats
	byClass [numClasses]uint64
	since   time.Duration
}

// NewServer returns a server whose threads run on sched's cores, over the
// bridges of the host's stack instances (one per instance; each listens
// on the port, Gazelle's listen_shadow).
func NewServer(cfg ServerConfig, sched *Scheduler, router *lstack.Router, bridges []*lstack.Bridge) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sched == nil || router == nil || len(bridges) == 0 {
		return nil, errors.New("oltp: a server needs a scheduler, a router and at least one bridge")
	}
	if sched.CPUs() == 0 {
		return nil, errors.New("oltp: the server's scheduler has no cores")
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, sched: sched, router: router, threads: map[int]*thread{}}
	for i, b := range bridges {
		if err := b.Listen(cfg.Port, cfg.Backlog, s.accept); err != nil {
			return nil, fmt.Errorf("oltp: instance %d: %w", i, err)
		}
	}
	return s, nil
}

// Config returns the configuration with defaults applied.
func (s *Server) Config() ServerConfig { return s.cfg }

// ResetStats starts a new measurement window at now.
func (s *Server) ResetStats(now time.Duration) {
	s.stats = ServerStats{}
	s.byClass = [numClasses]uint64{}
	s.since = now
	s.sched.ResetStats()
}

// Stats returns the counters, with QPS over the window ending at now.
func (s *Server) Stats(now time.Duration) ServerStats {
	st := s.stats
	st.Threads = len(s.threads)
	st.ByClass = map[string]uint64{}
	for c := Class(0); c < numClasses; c++ {
		st.ByClass[c.String()] = s.byClass[c]
	}
	if w := now - s.since; w > 0 {
		st.QPS = float64(st.Queries) / w.Seconds()
	}
	return st
}

// Queries returns the statements executed since the last ResetStats.
func (s *Server) Queries() uint64 { return s.stats.Queries }

// Scheduler returns the server's scheduler.
func (s *Server) Scheduler() *Scheduler { return s.sched }

// accept runs on the stack thread for each new connection: mysqld's
// connection handler gives it a thread (max_connections permitting),
// which starts by waiting for the first statement.
func (s *Server) accept(fd int, sock *lstack.Socket) {
	s.stats.Connections++
	t := &thread{srv: s, sock: sock, fd: fd}
	t.wakeFn = t.wake
	if len(s.threads) >= s.cfg.MaxConnections {
		// MySQL sends ER_CON_COUNT_ERROR in place of the handshake.
		s.stats.Refused++
		t.refuse = true
	}
	s.threads[fd] = t
	s.sched.Ready(t, 0)
}

// thread is one connection's thread.
type thread struct {
	srv    *Server
	sock   *lstack.Socket
	fd     int
	in     []byte
	out    []byte
	refuse bool
	done   bool
	eof    bool
	// owed is query-engine time executed statements still have to run
	// before their results go out.
	owed   time.Duration
	wakeFn func(at time.Duration)
	// work counts the input's bytes examined, moved and copied by
	// growth, for the specs that check a large statement costs linear
	// work whatever pieces it comes in.
	work uint64
}

// wake makes the thread runnable at at (called on the stack thread).
func (t *thread) wake(at time.Duration) { t.srv.sched.Ready(t, at) }

// readChunk is the room given each read.
const readChunk = 16 << 10

// Run implements Task: read what has arrived, execute every whole
// statement, write the results, then sleep on the socket. A statement's
// CPU time is paid in slices when the core has one; its result leaves
// once it is paid.
func (t *thread) Run(m hw.Meter, slice time.Duration) bool {
	if t.done {
		return false
	}
	if t.owed > 0 {
		return t.pay(m, slice) || t.finish(m)
	}
	if t.refuse {
		// The model's client sends its first statement without waiting
		// for a greeting; a real one waits, so mysqld closes with
		// nothing unread. Drop what came, or the close would be an
		// abort (RFC 2525 2.17) that loses the error.
		for n, err := t.sock.Read(m, t.room()); n > 0 && err == nil; n, err = t.sock.Read(m, t.room()) {
		}
		t.out = AppendError(t.out, 0, 1040, "08004", "Too many connections")
		t.flush(m)
		t.close(m)
		return false
	}
	if len(t.out) > 0 && !t.flush(m) {
		t.srv.sched.Ready(t, m.Now())
		return false
	}
	for {
		n, err := t.sock.Read(m, t.room())
		t.in = t.in[:len(t.in)+n]
		if err != nil {
			t.eof = true
			break
		}
		if n == 0 {
			break
		}
	}
	if !t.execute(m) {
		t.close(m)
		return false
	}
	if t.owed > 0 && t.pay(m, slice) {
		return true
	}
	return t.finish(m)
}

// room returns the free room after the input, at least readChunk bytes.
// The input's capacity at least doubles when it grows, so a statement of
// up to MaxPayload bytes arriving in pieces is copied less than once per
// byte overall (growing by a fixed step copied it once per step), and it
// grows only by what has arrived, never by the length a header claims.
func (t *thread) room() []byte {
	if cap(t.in)-len(t.in) < readChunk {
		t.work += uint64(len(t.in))
		grown := make([]byte, len(t.in), max(2*cap(t.in), len(t.in)+2*readChunk))
		copy(grown, t.in)
		t.in = grown
	}
	return t.in[len(t.in):cap(t.in)]
}

// pay charges the query engine's time still owed, up to a slice; true
// while some is left.
func (t *thread) pay(m hw.Meter, slice time.Duration) bool {
	d := t.owed
	if slice > 0 {
		d = min(d, slice)
	}
	m.Charge(appcost.Nanos, int64(d))
	t.owed -= d
	return t.owed > 0
}

// finish writes the results and sleeps on the socket; it returns false:
// the thread leaves the core.
func (t *thread) finish(m hw.Meter) bool {
	if len(t.out) > 0 && !t.flush(m) {
		t.srv.sched.Ready(t, m.Now()) // the send ring is full: yield, retry
		return false
	}
	if t.eof {
		t.close(m)
		return false
	}
	if !t.sock.Wait(m, t.wakeFn) {
		t.srv.sched.Ready(t, m.Now()) // more arrived meanwhile
	}
	return false
}

// execute runs every whole command in the input; false means the
// connection ends (COM_QUIT or a malformed packet).
func (t *thread) execute(m hw.Meter) bool {
	off := 0
	defer func() {
		// Nothing moves while a packet is still arriving, so it is not
		// copied once per piece.
		if off > 0 {
			t.work += uint64(len(t.in) - off)
			t.in = append(t.in[:0], t.in[off:]...)
		}
	}()
	for off < len(t.in) {
		t.work += HeaderLen
		p, n, err := ParsePacket(t.in[off:])
		if errors.Is(err, ErrIncomplete) {
			return true
		}
		if err != nil {
			t.srv.stats.ProtocolErrors++
			return false
		}
		off += n
		cmd, err := ParseCommand(p)
		if err != nil {
			t.srv.stats.ProtocolErrors++
			return false
		}
		switch cmd.Code {
		case ComQuit:
			return false
		case ComPing:
			m.Charge(appcost.Nanos, int64(t.srv.cfg.Costs.Other))
			t.out = AppendOK(t.out, p.Seq()+1, 0, 0, statusAutocommit)
		case ComQuery:
			t.query(m, p.Seq()+1, cmd.Arg)
		default:
			t.srv.stats.Unsupported++
			t.out = AppendError(t.out, p.Seq()+1, 1047, "08S01", "Unknown command")
		}
	}
	return true
}

// query executes one statement: its cost is charged from its class, and
// its result is synthetic (one row for a SELECT, one affected row for a
// change): the model is of where the CPU goes, not of a database.
func (t *thread) query(m hw.Meter, seq uint8, sql []byte) {
	c := Classify(sql)
	m.Charge(appcost.ParseByte, int64(len(sql)))
	d := t.srv.cfg.Costs.Of(c)
	t.owed += d
	t.srv.stats.QueryCPUUS += float64(d) / 1e3
	t.srv.stats.Queries++
	t.srv.byClass[c]++
	switch c {
	case ClassPointSelect, ClassRangeSelect:
		n := SelectColumns(sql)
		if n > maxColumns {
			// Checked before the result set is built: a statement of
			// commas would otherwise cost ~50 bytes of column
			// definition each. MySQL refuses a select list beyond
			// MAX_FIELDS with ER_TOO_MANY_FIELDS (1117).
			t.out = AppendError(t.out, seq, 1117, "HY000", "Too many columns")
			return
		}
		cols := make([]string, n)
		row := make([]string, n)
		for i := range cols {
			cols[i] = "c" + strconv.Itoa(i)
			row[i] = "0000000000"
		}
		t.out, _ = AppendResultSet(t.out, seq, "t", cols, [][]string{row}, statusInTrans)
	case ClassUpdate, ClassInsert, ClassDelete:
		t.out = AppendOK(t.out, seq, 1, 0, statusInTrans)
	default:
		t.out = AppendOK(t.out, seq, 0, 0, statusAutocommit)
	}
}

// flush writes the pending output; false when the send ring took only
// part of it or none (the rest waits in out).
func (t *thread) flush(m hw.Meter) bool {
	n, err := t.sock.Write(m, t.out)
	switch {
	case errors.Is(err, lstack.ErrRingFull):
		t.srv.stats.SendRetries++
		return false
	case err != nil || n == len(t.out):
		t.out = t.out[:0]
		return true
	}
	t.out = append(t.out[:0], t.out[n:]...)
	t.srv.stats.SendRetries++
	return false
}

func (t *thread) close(m hw.Meter) {
	t.done = true
	t.sock.Close(m)
	delete(t.srv.threads, t.fd)
}
