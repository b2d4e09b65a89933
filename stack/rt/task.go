package rt

import "sync/atomic"

// Task is work an application goroutine asks an lcore to run: the
// request path of Gazelle's app/stack decoupling. A Task is reusable: a
// socket keeps one and kicks it whenever it has something for the lcore
// (bytes in its send ring, a close); kicks coalesce until it runs.
type Task struct {
	next   *Task
	queued atomic.Bool
	fn     func(*Lcore)
}

// NewTask returns a task that runs fn on the lcore it is kicked to.
func NewTask(fn func(*Lcore)) *Task { return &Task{fn: fn} }

// taskList is a lock-free multi-producer single-consumer list: producers
// push with a compare-and-swap (a Treiber stack), the lcore takes the
// whole list with one swap and runs it oldest first. Taking everything at
// once means there is no ABA hazard with a single consumer.
type taskList struct {
	head atomic.Pointer[Task]
}

// push adds t unless it is already queued; it reports whether it did.
func (l *taskList) push(t *Task) bool {
	if !t.queued.CompareAndSwap(false, true) {
		return false
	}
	for {
		h := l.head.Load()
		t.next = h
		if l.head.CompareAndSwap(h, t) {
			return true
		}
	}
}

// takeAll removes every task and returns them oldest first.
func (l *taskList) takeAll() *Task {
	h := l.head.Swap(nil)
	var rev *Task
	for h != nil {
		n := h.next
		h.next = rev
		rev = h
		h = n
	}
	return rev
}

func (l *taskList) empty() bool { return l.head.Load() == nil }
