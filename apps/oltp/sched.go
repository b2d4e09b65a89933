package oltp

import (
	"container/heap"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// The kernel scheduler as mysqld's threads see it: one run queue shared by
// the server's application cores (the cores mysqld may run on), threads
// made runnable by a wake-up joining its tail, and a core that switches
// from one thread to another paying a context switch. mysqld's threads are
// kernel threads whichever stack the sockets use, so the scheduler's
// prices are the same in both modes; only what the threads do between
// switches differs.

// Task is a thread the scheduler runs: Run does one burst on the core
// whose meter it is given and says whether the thread is still running
// (it used up its slice of the core and goes on at the core's next turn)
// or has blocked or yielded (it left the core; a wake-up or a Ready puts
// it back in the run queue).
type Task interface {
	Run(m hw.Meter, slice time.Duration) (running bool)
}

// SchedStats are the scheduler's counters.
type SchedStats struct {
	// Runs counts bursts run; Switches those that began with a context
	// switch (the core last ran another thread).
	Runs     uint64 `json:"runs"`
	Switches uint64 `json:"context_switches"`
	// Wakeups counts threads made runnable.
	Wakeups uint64 `json:"wakeups"`
	// MaxRunQueue is the longest the run queue was.
	MaxRunQueue int `json:"max_run_queue"`
	// RunQueueWait is the total time runnable threads waited for a core,
	// in microseconds; divide by Runs for the mean.
	RunQueueWaitUS float64 `json:"run_queue_wait_us"`
}

// Scheduler is the run queue of a set of application cores.
type Scheduler struct {
	cpus  []*CPU
	runq  []*entry
	head  int
	stats SchedStats
	// sleepers are threads runnable only from a later time (a commit
	// waiting for its group's fsync): a timed wake-up, kept apart from
	// the run queue so that one does not hold up the threads behind it.
	sleepers sleepHeap
	seq      uint64
}

type entry struct {
	t     Task
	ready time.Duration
	seq   uint64
}

// sleepHeap orders sleepers by wake time, then by when they slept, so
// that same-instant wake-ups join the run queue in a fixed order.
type sleepHeap []*entry

func (h sleepHeap) Len() int { return len(h) }
func (h sleepHeap) Less(i, j int) bool {
	if h[i].ready != h[j].ready {
		return h[i].ready < h[j].ready
	}
	return h[i].seq < h[j].seq
}
func (h sleepHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sleepHeap) Push(x any)   { *h = append(*h, x.(*entry)) }
func (h *sleepHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// NewScheduler returns a scheduler with no cores yet.
func NewScheduler() *Scheduler { return &Scheduler{} }

// Stats returns the counters.
func (s *Scheduler) Stats() SchedStats { return s.stats }

// ResetStats zeroes the counters.
func (s *Scheduler) ResetStats() {
	s.stats = SchedStats{MaxRunQueue: s.queued()}
}

// CPUs returns the number of cores.
func (s *Scheduler) CPUs() int { return len(s.cpus) }

// AddCPU adds an application core. wake asks the core for a turn at a
// time (in virtual time, sim.Core.Wake); the returned CPU is the poller
// to attach to that core. slice is how long a thread runs before the
// core's other pollers get a turn, 0 for as long as it likes: a core
// shared with a kernel stack's interrupt work needs one, since a
// simulated turn cannot be preempted and an interrupt would otherwise
// wait for the whole query (Linux takes it within microseconds).
func (s *Scheduler) AddCPU(wake func(at time.Duration), slice time.Duration) *CPU {
	c := &CPU{s: s, wake: wake, idle: true, slice: slice}
	s.cpus = append(s.cpus, c)
	return c
}

func (s *Scheduler) queued() int { return len(s.runq) - s.head }

// Ready makes t runnable at time at, and wakes the first idle core.
func (s *Scheduler) Ready(t Task, at time.Duration) {
	s.runq = append(s.runq, &entry{t: t, ready: at})
	s.stats.Wakeups++
	s.stats.MaxRunQueue = max(s.stats.MaxRunQueue, s.queued())
	for _, c := range s.cpus {
		if c.idle {
			c.idle = false
			c.wake(at)
			return
		}
	}
}

// Sleep makes t runnable at until, a time that may be well ahead (the
// kernel's timed wake-up: futex_wait with a timeout, or the log flush
// notifier's wake-up at a known instant). Threads made runnable by Ready
// meanwhile run first. One idle core is asked for a turn at until; a
// core that finds nothing to run sleeps until the earliest sleeper.
func (s *Scheduler) Sleep(t Task, until time.Duration) {
	s.seq++
	heap.Push(&s.sleepers, &entry{t: t, ready: until, seq: s.seq})
	for _, c := range s.cpus {
		if c.idle {
			c.wake(until)
			return
		}
	}
}

// pop takes the oldest runnable thread, if it is runnable by now; else
// it returns the time one will be. Sleepers whose time has come join the
// run queue's tail first.
func (s *Scheduler) pop(now time.Duration) (*entry, time.Duration) {
	for len(s.sleepers) > 0 && s.sleepers[0].ready <= now {
		e := heap.Pop(&s.sleepers).(*entry)
		s.runq = append(s.runq, e)
		s.stats.Wakeups++
		s.stats.MaxRunQueue = max(s.stats.MaxRunQueue, s.queued())
	}
	if s.head == len(s.runq) {
		if len(s.sleepers) > 0 {
			return nil, s.sleepers[0].ready
		}
		return nil, hw.NoDeadline
	}
	e := s.runq[s.head]
	if e.ready > now {
		if len(s.sleepers) > 0 {
			return nil, min(e.ready, s.sleepers[0].ready)
		}
		return nil, e.ready
	}
	s.runq[s.head] = nil
	s.head++
	if s.head == len(s.runq) {
		s.runq, s.head = s.runq[:0], 0
	} else if s.head > 1024 && s.head*2 > len(s.runq) {
		n := copy(s.runq, s.runq[s.head:])
		clear(s.runq[n:])
		s.runq, s.head = s.runq[:n], 0
	}
	return e, 0
}

// CPU is one application core of a scheduler: a poller that runs one
// runnable thread per turn.
type CPU struct {
	s    *Scheduler
	wake func(at time.Duration)
	// idle says the core found nothing to run on its last turn, so a
	// wake-up must call it.
	idle  bool
	last  Task
	slice time.Duration
	// cur is the thread on the core, still in its burst.
	cur Task
}

// Poll runs the thread on the core for another slice, or the next
// runnable thread.
func (c *CPU) Poll(m hw.Meter) (bool, time.Duration) {
	if c.cur != nil {
		if !c.cur.Run(m, c.slice) {
			c.cur = nil
		}
		return true, hw.NoDeadline
	}
	now := m.Now()
	e, next := c.s.pop(now)
	if e == nil {
		c.idle = true
		return false, next
	}
	c.idle = false
	c.s.stats.Runs++
	c.s.stats.RunQueueWaitUS += float64(now-e.ready) / 1e3
	if c.last != e.t {
		// The switch from the thread that ran last (or from idle) to
		// this one: registers, stack, TLB and cache state (the cost
		// model's context_switch includes the cache effects).
		m.Charge(hw.CostContextSwitch, 1)
		c.s.stats.Switches++
		c.last = e.t
	}
	if e.t.Run(m, c.slice) {
		c.cur = e.t
	}
	return true, hw.NoDeadline
}
