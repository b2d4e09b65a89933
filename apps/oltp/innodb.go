package oltp

import (
	"fmt"
	"time"
)

// InnoDB's waits that are not CPU: a transaction that wants a row another
// transaction holds waits for it (record locks, held to the end of the
// transaction), and a commit waits for the redo log's fsync of its group
// (group commit). Without them a statement waits only for the network
// and the CPU; docs/oltp.md gives each rule's source.

// InnoDBConfig are the server's storage-engine settings that make
// statements wait (my.cnf's names where they have one).
type InnoDBConfig struct {
	// RowLocks says whether row locks are modelled, default true: an
	// UPDATE, a DELETE or a SELECT ... FOR UPDATE takes an exclusive
	// lock on the row its WHERE clause names, held until the
	// transaction commits or rolls back; a transaction that finds the
	// row taken waits in line (FIFO) for it.
	RowLocks *bool `yaml:"row_locks"`
	// FlushLogAtTrxCommit is innodb_flush_log_at_trx_commit, default 1
	// (MySQL's): a commit that wrote waits until the redo log is
	// fsynced to its record. 0 and 2 do not wait for an fsync.
	FlushLogAtTrxCommit *int `yaml:"flush_log_at_trx_commit"`
	// LogBin says the binary log is on (log_bin; default false, as
	// skip_log_bin sets it). With it, commits go through the binlog's
	// ordered commit: the group's redo fsync, then its binlog fsync
	// (when SyncBinlog is 1), and locks are released only after both.
	LogBin bool `yaml:"log_bin"`
	// SyncBinlog is sync_binlog, default 1 (MySQL 8.0's).
	SyncBinlog *int `yaml:"sync_binlog"`
	// Fsync is one log write and fsync on the server's storage, default
	// 0 (storage not modelled: a commit never waits).
	Fsync time.Duration `yaml:"fsync"`
}

// Validate checks the settings; errors name the key.
func (c InnoDBConfig) Validate() error {
	if c.FlushLogAtTrxCommit != nil && (*c.FlushLogAtTrxCommit < 0 || *c.FlushLogAtTrxCommit > 2) {
		return fmt.Errorf("innodb.flush_log_at_trx_commit: %d is not 0, 1 or 2", *c.FlushLogAtTrxCommit)
	}
	if c.SyncBinlog != nil && *c.SyncBinlog < 0 {
		return fmt.Errorf("innodb.sync_binlog: %d is negative", *c.SyncBinlog)
	}
	if c.Fsync < 0 || c.Fsync > time.Second {
		return fmt.Errorf("innodb.fsync: %v is outside 0..1s", c.Fsync)
	}
	return nil
}

func (c InnoDBConfig) withDefaults() InnoDBConfig {
	if c.RowLocks == nil {
		on := true
		c.RowLocks = &on
	}
	if c.FlushLogAtTrxCommit == nil {
		one := 1
		c.FlushLogAtTrxCommit = &one
	}
	if c.SyncBinlog == nil {
		one := 1
		c.SyncBinlog = &one
	}
	return c
}

// flushTime is how long one commit group's flush takes: the redo log's
// fsync when innodb_flush_log_at_trx_commit is 1, and the binary log's
// when it is on with sync_binlog 1 (sql/binlog.cc,
// MYSQL_BIN_LOG::ordered_commit: flush stage, then sync stage). A
// sync_binlog of N > 1 fsyncs every N groups; the model charges none.
func (c InnoDBConfig) flushTime() time.Duration {
	var d time.Duration
	if *c.FlushLogAtTrxCommit == 1 {
		d += c.Fsync
	}
	if c.LogBin && *c.SyncBinlog == 1 {
		d += c.Fsync
	}
	return d
}

// InnoDBStats are the waits' counters (MySQL's status names where it has
// one).
type InnoDBStats struct {
	// RowLockWaits counts lock requests that had to wait
	// (Innodb_row_lock_waits); RowLockTimeUS the time they waited, in
	// microseconds (Innodb_row_lock_time, which MySQL gives in ms);
	// RowLockWaitsByTable splits the waits by table.
	RowLockWaits        uint64            `json:"row_lock_waits"`
	RowLockTimeUS       float64           `json:"row_lock_time_us"`
	RowLockWaitsByTable map[string]uint64 `json:"row_lock_waits_by_table"`
	// RowLocksHeld is the rows locked now; RowLockWaiting the requests
	// waiting now.
	RowLocksHeld   int `json:"row_locks_held"`
	RowLockWaiting int `json:"row_lock_waiting"`
	// Deadlocks counts transactions rolled back because their wait would
	// have closed a cycle (Innodb_deadlocks); the client gets ER 1213.
	Deadlocks uint64 `json:"deadlocks"`
	// LogFlushes counts commit groups flushed (Innodb_os_log_fsyncs,
	// when each flush is one fsync); GroupCommits the commits that
	// waited for one; GroupMean and GroupMax their commits per flush.
	LogFlushes   uint64  `json:"log_flushes"`
	GroupCommits uint64  `json:"group_commits"`
	GroupMean    float64 `json:"group_mean"`
	GroupMax     int     `json:"group_max"`
	// CommitWaitUS is the time commits waited for their group's flush,
	// in microseconds; divide by GroupCommits for the mean.
	CommitWaitUS float64 `json:"commit_wait_us"`
}

// trx is one connection's transaction: the rows it locked, in the order
// it locked them, and whether it changed anything (a read-only
// transaction writes no redo and its commit waits for no flush).
type trx struct {
	th      *thread
	locks   []*rowLock
	wrote   bool
	waiting *rowLock
	since   time.Duration
}

// rowLock is one row's exclusive lock and its queue.
type rowLock struct {
	key     string
	table   string
	owner   *trx
	waiters []*trx
}

// lockTable is InnoDB's lock system reduced to exclusive record locks:
// a row is locked by one transaction and the others queue for it in
// arrival order (lock_rec_enqueue_waiting; InnoDB grants in that order
// when no lock is compatible, which exclusive locks never are).
type lockTable struct {
	rows  map[string]*rowLock
	stats InnoDBStats
}

func newLockTable() *lockTable {
	return &lockTable{rows: map[string]*rowLock{}}
}

// acquire asks for the row key of table for tx at now: true when tx holds
// it; false when tx waits (its thread is woken by grant); a deadlock when
// waiting would close a cycle of waits (InnoDB's detector,
// lock0lock.cc, rolls back a victim; here the requester).
func (lt *lockTable) acquire(tx *trx, table, key string, now time.Duration) (granted, deadlock bool) {
	r := lt.rows[key]
	if r == nil {
		r = &rowLock{key: key, table: table, owner: tx}
		lt.rows[key] = r
		tx.locks = append(tx.locks, r)
		return true, false
	}
	if r.owner == tx {
		return true, false
	}
	for o := r.owner; o != nil; {
		if o == tx {
			lt.stats.Deadlocks++
			return false, true
		}
		if o.waiting == nil {
			break
		}
		o = o.waiting.owner
	}
	r.waiters = append(r.waiters, tx)
	tx.waiting, tx.since = r, now
	lt.stats.RowLockWaits++
	if lt.stats.RowLockWaitsByTable == nil {
		lt.stats.RowLockWaitsByTable = map[string]uint64{}
	}
	lt.stats.RowLockWaitsByTable[table]++
	return false, false
}

// release frees every row tx holds at now, handing each to the first
// transaction waiting for it, whose thread becomes runnable.
func (lt *lockTable) release(tx *trx, now time.Duration) {
	for i, r := range tx.locks {
		tx.locks[i] = nil
		if len(r.waiters) == 0 {
			delete(lt.rows, r.key)
			continue
		}
		next := r.waiters[0]
		copy(r.waiters, r.waiters[1:])
		r.waiters[len(r.waiters)-1] = nil
		r.waiters = r.waiters[:len(r.waiters)-1]
		r.owner = next
		next.waiting = nil
		next.locks = append(next.locks, r)
		lt.stats.RowLockTimeUS += float64(max(now-next.since, 0)) / 1e3
		next.th.granted(now)
	}
	tx.locks = tx.locks[:0]
}

// Stats returns the lock counters with the rows held and waited for now.
func (lt *lockTable) Stats() InnoDBStats {
	s := lt.stats
	s.RowLocksHeld = len(lt.rows)
	for _, r := range lt.rows {
		s.RowLockWaiting += len(r.waiters)
	}
	if s.RowLockWaitsByTable != nil {
		m := make(map[string]uint64, len(s.RowLockWaitsByTable))
		for k, v := range s.RowLockWaitsByTable {
			m[k] = v
		}
		s.RowLockWaitsByTable = m
	}
	return s
}

// groupCommit is the redo log's flusher (MySQL 8.0's log_flusher thread,
// log0write.cc): it fsyncs everything written so far, and a commit whose
// record arrives while an fsync is under way waits for the next one,
// which starts when the current ends and covers every commit that
// arrived meanwhile. A commit with the flusher idle starts a flush of its
// own and waits all of it.
type groupCommit struct {
	dur        time.Duration
	any        bool
	start, end time.Duration // the latest flush scheduled
	size       int           // its commits so far
	flushes    uint64
	commits    uint64
	max        int
	waitUS     float64
}

// join adds a commit at now to a flush group and returns when that
// group's flush ends.
func (g *groupCommit) join(now time.Duration) time.Duration {
	if g.dur <= 0 {
		return now
	}
	g.commits++
	switch {
	case !g.any || now >= g.end:
		g.open(now)
	case now < g.start:
		// The next flush is queued behind the one under way: join it.
		g.size++
		g.max = max(g.max, g.size)
	default:
		g.open(g.end)
	}
	g.waitUS += float64(g.end-now) / 1e3
	return g.end
}

func (g *groupCommit) open(at time.Duration) {
	g.any = true
	g.start, g.end, g.size = at, at+g.dur, 1
	g.flushes++
	g.max = max(g.max, 1)
}

func (g *groupCommit) resetStats() {
	g.flushes, g.commits, g.max, g.waitUS = 0, 0, 0, 0
}
