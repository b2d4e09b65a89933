package oltp

import (
	"bytes"
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
	// InnoDB are the storage engine's waits: row locks and the commit's
	// log flush.
	InnoDB InnoDBConfig `yaml:"innodb"`
}

// Validate checks the configuration; errors name the key.
func (c *ServerConfig) Validate() error {
	switch {
	case c.Backlog < 0 || c.Backlog > 65535:
		return fmt.Errorf("backlog: %d is outside 1..65535", c.Backlog)
	case c.MaxConnections < 0 || c.MaxConnections > 100000:
		return fmt.Errorf("max_connections: %d is outside 1..100000", c.MaxConnections)
	}
	if err := c.InnoDB.Validate(); err != nil {
		return err
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
	c.InnoDB = c.InnoDB.withDefaults()
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
	// InnoDB are the row lock and group commit counters.
	InnoDB InnoDBStats `json:"innodb"`
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
	locks   *lockTable
	log     groupCommit
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
	s := &Server{cfg: cfg, sched: sched, router: router, threads: map[int]*thread{},
		locks: newLockTable(), log: groupCommit{dur: cfg.InnoDB.flushTime()}}
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
	s.locks.stats = InnoDBStats{}
	s.log.resetStats()
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
	st.InnoDB = s.locks.Stats()
	st.InnoDB.LogFlushes, st.InnoDB.GroupCommits = s.log.flushes, s.log.commits
	st.InnoDB.GroupMax, st.InnoDB.CommitWaitUS = s.log.max, s.log.waitUS
	if s.log.flushes > 0 {
		st.InnoDB.GroupMean = float64(s.log.commits) / float64(s.log.flushes)
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
	t.trx.th = t
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
	// trx is the connection's transaction; act what the statement just
	// executed still waits for once its CPU time is paid (a row lock, the
	// commit's flush); lockTable and lockKey the row it wants; heldFrom
	// where its result starts in out (seq its sequence number), replaced
	// by an error if it is rolled back; more says whole statements wait in the input behind it.
	trx       trx
	act       action
	lockTable string
	lockKey   string
	heldFrom  int
	seq       uint8
	more      bool
	// gotLock and flushed say the wait is over, so that a thread run
	// for another reason while it waits goes on waiting.
	gotLock bool
	flushed time.Duration
}

// action is what a statement waits for after its CPU time.
type action uint8

const (
	actNone      action = iota
	actLock             // ask for the row lock
	actLockWait         // queued for it; grant wakes the thread
	actCommit           // release the locks and join a flush group
	actFlushWait        // asleep until the group's flush ends
)

// wake makes the thread runnable at at (called on the stack thread).
func (t *thread) wake(at time.Duration) { t.srv.sched.Ready(t, at) }

// granted is the lock table handing the thread the row it waited for.
func (t *thread) granted(at time.Duration) {
	t.gotLock = true
	t.srv.sched.Ready(t, at)
}

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
	if t.owed > 0 || t.act != actNone {
		if t.owed > 0 && t.pay(m, slice) {
			return true
		}
		return t.settle(m) && t.finish(m)
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
	return t.settle(m) && t.finish(m)
}

// settle does what the statement just executed waits for once its CPU
// time is paid: true when the thread goes on, false when it sleeps (a
// row lock's grant or the end of its group's flush wakes it).
func (t *thread) settle(m hw.Meter) bool {
	s := t.srv
	switch t.act {
	case actLock:
		ok, dead := s.locks.acquire(&t.trx, t.lockTable, t.lockKey, m.Now())
		switch {
		case dead:
			// InnoDB rolls the whole transaction back and answers
			// ER_LOCK_DEADLOCK (1213, SQLSTATE 40001).
			t.out = AppendError(t.out[:t.heldFrom], t.seq, 1213, "40001", "Deadlock found when trying to get lock; try restarting transaction")
			t.endTrx(m.Now())
		case !ok:
			t.act, t.gotLock = actLockWait, false
			return false
		}
		t.act = actNone
	case actLockWait:
		if !t.gotLock {
			return false
		}
		t.act = actNone
	case actCommit:
		now := m.Now()
		if !s.cfg.InnoDB.LogBin {
			// Without the binary log, trx_commit_in_memory
			// (trx0trx.cc) releases the locks, then waits for the
			// log flush (trx_flush_log_if_needed).
			s.locks.release(&t.trx, now)
		}
		if done := s.log.join(now); done > now {
			t.act, t.flushed = actFlushWait, done
			s.sched.Sleep(t, done)
			return false
		}
		t.endTrx(now)
		t.act = actNone
	case actFlushWait:
		if m.Now() < t.flushed {
			return false
		}
		t.endTrx(m.Now())
		t.act = actNone
	}
	return true
}

// endTrx ends the transaction: with the binary log on, locks are
// released in ordered commit's commit stage, after both fsyncs.
func (t *thread) endTrx(now time.Duration) {
	t.srv.locks.release(&t.trx, now)
	t.trx.wrote = false
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
	if t.more {
		// Statements wait in the input behind the one that waited:
		// run them now.
		t.more = false
		t.srv.sched.Ready(t, m.Now())
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
			if t.act != actNone {
				// The statement waits (a lock, a flush) before the
				// next runs, as a connection's statements run in turn.
				t.more = off < len(t.in)
				return true
			}
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
	t.heldFrom, t.seq = len(t.out), seq
	if t.srv.cfg.InnoDB.RowLocks != nil && *t.srv.cfg.InnoDB.RowLocks {
		if table, key, ok := LockTarget(sql, c); ok {
			t.act, t.lockTable, t.lockKey = actLock, table, key
		}
	}
	switch c {
	case ClassUpdate, ClassInsert, ClassDelete:
		t.trx.wrote = true
	case ClassCommit:
		if bytes.HasPrefix(bytes.ToUpper(bytes.TrimSpace(sql)), []byte("ROLLBACK")) || !t.trx.wrote {
			// Nothing to make durable: a read-only transaction writes
			// no redo, and a rollback waits for no flush.
			t.endTrx(m.Now())
		} else {
			t.act = actCommit
		}
	}
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
	// A connection that ends rolls its transaction back.
	t.endTrx(m.Now())
	t.sock.Close(m)
	delete(t.srv.threads, t.fd)
}
