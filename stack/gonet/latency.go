package gonet

import (
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// ReadLatency records how long received bytes wait inside the stack
// before the application reads them: the figure Gazelle's `gazellectl
// lstack show -l` reports (the time a packet spends in the stack before
// the application takes it), measured at gonet's receive ring.
//
// What is measured, per Read that returns data: the time from the moment
// the lcore put bytes into the connection's receive ring while it was
// empty (from the arriving segment directly, or from TCP's receive
// buffer) to the Read. It is the age of the oldest byte the Read can
// return, so a Read that leaves bytes behind makes the next one count
// from the same moment: the figure says how far the application lags
// behind the stack, not how long one byte took. It leaves out the time
// before the lcore polled the frame (NIC ring, kernel TAP queue) and the
// time a full ring held bytes back in TCP. A refill racing with a Read
// that empties the ring can shift one sample by that race's window (the
// ring's two sides do not lock).
//
// Samples go to one HdrHistogram per lcore (1 ns to 100 s, three
// significant digits), each behind its own mutex, so that application
// goroutines of different lcores do not contend. Safe for concurrent use.
type ReadLatency struct {
	shards []latencyShard
}

type latencyShard struct {
	mu sync.Mutex
	h  *hdr.Histogram
	_  [40]byte // keep shards on separate cache lines
}

// Bounds of the recorded values, in nanoseconds.
const (
	latencyLowest  = 1
	latencyHighest = int64(100 * time.Second)
	latencyDigits  = 3
)

// NewReadLatency returns an empty recorder for a runtime of lcores
// lcores; samples from lcores beyond go to the last shard.
func NewReadLatency(lcores int) *ReadLatency {
	l := &ReadLatency{shards: make([]latencyShard, max(1, lcores))}
	for i := range l.shards {
		l.shards[i].h = hdr.New(latencyLowest, latencyHighest, latencyDigits)
	}
	return l
}

// record adds one sample for a connection of lcore.
func (l *ReadLatency) record(lcore int, d time.Duration) {
	sh := &l.shards[min(max(lcore, 0), len(l.shards)-1)]
	v := min(max(int64(d), latencyLowest), latencyHighest)
	sh.mu.Lock()
	_ = sh.h.RecordValue(v)
	sh.mu.Unlock()
}

// Histogram returns a copy of every lcore's samples merged, in
// nanoseconds; the recorder goes on recording.
func (l *ReadLatency) Histogram() *hdr.Histogram {
	out := hdr.New(latencyLowest, latencyHighest, latencyDigits)
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		out.Merge(sh.h)
		sh.mu.Unlock()
	}
	return out
}
