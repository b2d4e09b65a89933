package tcp

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// idleConnsHeap opens n connections from stack 0 to stack 1 of a wire,
// has each send a 64-byte request that the server reads and answers with
// 64 bytes the client reads, lets every delayed ACK go out, and returns
// the heap in use (after a collection) per connection per side: the
// memory an idle established connection holds on its host, client and
// server endpoint averaged, with the application's Conn handles kept
// alive. It returns the live connections too, so the caller can keep
// them reachable.
func idleConnsHeap(n int) (perSide float64, conns []*Conn) {
	cfg := tuned(func(c *Config) {
		c.SynBacklog = n
	})
	w := newWire(wireConfig{latency: 10 * time.Microsecond, seed: 5}, [2]Config{cfg, cfg})
	l, err := w.stacks[1].Listen(w.addrs[1], 80, n)
	if err != nil {
		panic(err)
	}
	before := heapInUse()
	req := make([]byte, 64)
	buf := make([]byte, 256)
	conns = make([]*Conn, 0, 2*n)
	for i := 0; i < n; i++ {
		c, err := w.stacks[0].Connect(w.now, Addr{w.addrs[0], 0}, Addr{w.addrs[1], 80})
		if err != nil {
			panic(err)
		}
		conns = append(conns, c)
	}
	settle(w, time.Millisecond)
	for {
		s, ok := l.Accept()
		if !ok {
			break
		}
		conns = append(conns, s)
	}
	if len(conns) != 2*n {
		panic("not every connection was accepted")
	}
	for _, c := range conns[:n] {
		if _, err := c.Write(req); err != nil {
			panic(err)
		}
	}
	settle(w, time.Millisecond)
	for _, s := range conns[n:] {
		if k, err := s.Read(buf); k != len(req) {
			panic(fmt.Sprintf("request not received: %d %v %v %d", k, err, s.State(), w.now))
		}
		if _, err := s.Write(buf[:len(req)]); err != nil {
			panic(err)
		}
	}
	settle(w, time.Millisecond)
	for _, c := range conns[:n] {
		if k, _ := c.Read(buf); k != len(req) {
			panic("reply not received")
		}
	}
	// Let the delayed ACKs and every other timer but keep-alive run out.
	settle(w, time.Second)
	_ = w.stacks[0].Events(nil)
	_ = w.stacks[1].Events(nil)
	after := heapInUse()
	runtime.KeepAlive(w)
	return float64(after-before) / float64(2*n), conns
}

// settle runs the wire for d of virtual time, past every segment and
// timer due in it.
func settle(w *wire, d time.Duration) {
	end := w.now + d
	// step looks at the queue before Poll fills it: stop only when
	// nothing is due before end after a Poll too.
	for w.step(end) || (len(w.q) > 0 && w.q[0].at <= end) {
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkIdleConnMemory reports the heap an idle established
// connection holds per side (bytes/conn), after one request and its
// reply, so that a regression of the per-connection layout shows.
func BenchmarkIdleConnMemory(b *testing.B) {
	const n = 20000
	var per float64
	for i := 0; i < b.N; i++ {
		var conns []*Conn
		per, conns = idleConnsHeap(n)
		runtime.KeepAlive(conns)
	}
	b.ReportMetric(per, "bytes/conn")
}
