package work

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/savanna-sim/savanna/bench/netw"
)

// Params size the workloads. Full is the sizes, Quick finishes
// every workload on every network in well under two minutes, Tiny is for
// the specs.
type Params struct {
	// BulkBytes is what the bulk workload sends one way.
	BulkBytes int64 `json:"bulk_bytes"`
	// PingPongs is the ping-pong workload's round trips (after
	// Warmup untimed ones).
	PingPongs int `json:"ping_pongs"`
	Warmup    int `json:"warmup"`
	// MsgSize is the request and reply size of ping-pong and many.
	MsgSize int `json:"msg_size"`
	// Setups is the setup workload's sequential connections.
	Setups int `json:"setups"`
	// ManyConns connections each do ManyRounds ping-pongs at once.
	ManyConns  int `json:"many_conns"`
	ManyRounds int `json:"many_rounds"`
	// DialParallel bounds the dials in flight while the many workload
	// opens its connections (a listen backlog is not a load test).
	DialParallel int `json:"dial_parallel"`
	// AtPeak, when set, is called by the many workload at the moment
	// every connection is open and has done its round trips (the peak),
	// before any closes: the child writes its heap profile there.
	AtPeak func() `json:"-"`
}

// Full returns the sizes.
func Full() Params {
	return Params{BulkBytes: 256 << 20, PingPongs: 200_000, Warmup: 2000, MsgSize: 64,
		Setups: 20_000, ManyConns: 10_000, ManyRounds: 10, DialParallel: 64}
}

// Quick returns sizes for a run of every workload on every network in
// under two minutes.
func Quick() Params {
	return Params{BulkBytes: 128 << 20, PingPongs: 50_000, Warmup: 1000, MsgSize: 64,
		Setups: 5_000, ManyConns: 2_000, ManyRounds: 10, DialParallel: 64}
}

// Tiny returns sizes for the specs.
func Tiny() Params {
	return Params{BulkBytes: 1 << 20, PingPongs: 100, Warmup: 10, MsgSize: 64,
		Setups: 50, ManyConns: 50, ManyRounds: 10, DialParallel: 16}
}

// Workload is one measurement any network plugs into. port is the
// server's listening port (a fresh one per run keeps the kernel's
// TIME-WAIT entries of earlier runs out of the way).
type Workload func(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error)

// Names lists the workloads in report order.
func Names() []string { return []string{"bulk", "pingpong", "setup", "many"} }

// ByName returns the named workload.
func ByName(name string) (Workload, error) {
	switch name {
	case "bulk":
		return Bulk, nil
	case "pingpong":
		return PingPong, nil
	case "setup":
		return Setup, nil
	case "many":
		return Many, nil
	}
	return nil, fmt.Errorf("work: unknown workload %q (want one of %v)", name, Names())
}

// castagnoli is CRC-32C, hardware-accelerated on amd64 and arm64, so
// checking every byte of the bulk stream costs little and the same on
// every network.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// bulkChunk is the size of one Write of the bulk sender.
const bulkChunk = 64 << 10

// pattern returns the bulk stream's source: bytes that differ from one
// offset to the next, read at a rotating start so that consecutive
// chunks differ.
func pattern() []byte {
	b := make([]byte, bulkChunk+251)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func opErr(workload, network, what string, err error) error {
	return fmt.Errorf("%s on %s: %s: %w", workload, network, what, err)
}

// Bulk sends p.BulkBytes one way on one connection: MB/s and CPU-seconds
// per GB. The receiver checks the stream's CRC-32C against the sender's.
func Bulk(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error) {
	res := Result{Workload: "bulk", Network: n.Name(), MTU: n.MTU(), Family: n.Family()}
	ln, err := n.Listen(port)
	if err != nil {
		return res, opErr("bulk", n.Name(), "listen", err)
	}
	defer ln.Close()
	type got struct {
		n   int64
		crc uint32
		err error
	}
	done := make(chan got, 1)
	tab := castagnoli()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- got{err: err}
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		var total int64
		var crc uint32
		for {
			k, err := c.Read(buf)
			crc = crc32.Update(crc, tab, buf[:k])
			total += int64(k)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				done <- got{n: total, err: err}
				return
			}
		}
		done <- got{n: total, crc: crc}
	}()
	c, err := n.Dial(ctx, port)
	if err != nil {
		return res, opErr("bulk", n.Name(), "dial", err)
	}
	defer c.Close()
	src := pattern()
	d0 := n.Drops()
	u := ReadUsage()
	var sent int64
	var crc uint32
	for sent < p.BulkBytes {
		off := int(sent % 251)
		k := int(min(bulkChunk, p.BulkBytes-sent))
		b := src[off : off+k]
		if _, err := c.Write(b); err != nil {
			return res, opErr("bulk", n.Name(), fmt.Sprintf("write at byte %d", sent), err)
		}
		crc = crc32.Update(crc, tab, b)
		sent += int64(k)
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		err = cw.CloseWrite()
	} else {
		err = c.Close()
	}
	if err != nil {
		return res, opErr("bulk", n.Name(), "close write", err)
	}
	var g got
	select {
	case g = <-done:
	case <-ctx.Done():
		return res, opErr("bulk", n.Name(), "waiting for the receiver", ctx.Err())
	}
	res.Timed = u.Since()
	res.Drops = n.Drops().Sub(d0)
	if g.err != nil {
		return res, opErr("bulk", n.Name(), fmt.Sprintf("read after %d bytes", g.n), g.err)
	}
	if g.n != p.BulkBytes || g.crc != crc {
		return res, fmt.Errorf("bulk on %s: received %d bytes crc %08x; sent %d crc %08x", n.Name(), g.n, g.crc, p.BulkBytes, crc)
	}
	res.Checked = g.n
	res.Metrics = bulkMetrics(res.Timed, p.BulkBytes)
	return res, nil
}

// bulkMetrics are bulk's figures for bytes carried in t.
func bulkMetrics(t Span, bytes int64) []Metric {
	gb := float64(bytes) / 1e9
	return []Metric{
		{Name: "throughput", Unit: "MB/s", Value: float64(bytes) / 1e6 / t.Wall.Seconds(), Higher: true},
		{Name: "cpu_per_gb", Unit: "CPU-s/GB", Value: t.CPU.Seconds() / gb},
		{Name: "mb_per_cpu_s", Unit: "MB/CPU-s", Value: float64(bytes) / 1e6 / t.CPU.Seconds(), Higher: true},
	}
}

// Echo answers every msgSize-byte request on c with the same bytes until
// the peer closes: the server side of ping-pong and many.
func Echo(c net.Conn, msgSize int) error {
	buf := make([]byte, msgSize)
	for {
		if _, err := io.ReadFull(c, buf); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
}

// roundTrip sends a request carrying i and checks the reply carries it.
func roundTrip(c net.Conn, buf []byte, i uint64) error {
	binary.LittleEndian.PutUint64(buf, i)
	buf[len(buf)-1] = byte(i)
	if _, err := c.Write(buf); err != nil {
		return numberedErr("write request", i, err)
	}
	if _, err := io.ReadFull(c, buf); err != nil {
		return numberedErr("read reply", i, err)
	}
	if got := binary.LittleEndian.Uint64(buf); got != i || buf[len(buf)-1] != byte(i) {
		return mismatchErr(i, got)
	}
	return nil
}

// numberedErr and mismatchErr format errors out of line: a fmt.Errorf
// call lays its variadic arguments out in the frame of the function that
// makes it, even when it never runs, and the functions that run on the
// many workload's 20,000 goroutines keep their frames small (see
// manyClients).
//
//go:noinline
func numberedErr(what string, i uint64, err error) error {
	return fmt.Errorf("%s %d: %w", what, i, err)
}

//go:noinline
func mismatchErr(i, got uint64) error { return fmt.Errorf("reply %d carries %d", i, got) }

// PingPong does p.PingPongs round trips of p.MsgSize bytes each way on
// one connection: round trips/s, p50 and p99 latency, CPU per 100k.
func PingPong(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error) {
	res := Result{Workload: "pingpong", Network: n.Name(), MTU: n.MTU(), Family: n.Family()}
	ln, err := n.Listen(port)
	if err != nil {
		return res, opErr("pingpong", n.Name(), "listen", err)
	}
	defer ln.Close()
	srv := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			srv <- err
			return
		}
		defer c.Close()
		srv <- Echo(c, p.MsgSize)
	}()
	c, err := n.Dial(ctx, port)
	if err != nil {
		return res, opErr("pingpong", n.Name(), "dial", err)
	}
	defer c.Close()
	buf := make([]byte, p.MsgSize)
	for i := 0; i < p.Warmup; i++ {
		if err := roundTrip(c, buf, uint64(i)); err != nil {
			return res, opErr("pingpong", n.Name(), "warm-up", err)
		}
	}
	lat := make([]time.Duration, p.PingPongs)
	d0 := n.Drops()
	u := ReadUsage()
	for i := range lat {
		t0 := time.Now()
		if err := roundTrip(c, buf, uint64(p.Warmup+i)); err != nil {
			return res, opErr("pingpong", n.Name(), "timed", err)
		}
		lat[i] = time.Since(t0)
	}
	res.Timed = u.Since()
	res.Drops = n.Drops().Sub(d0)
	_ = c.Close()
	select {
	case err := <-srv:
		if err != nil {
			return res, opErr("pingpong", n.Name(), "server", err)
		}
	case <-ctx.Done():
		return res, opErr("pingpong", n.Name(), "waiting for the server", ctx.Err())
	}
	res.Checked = int64(len(lat))
	res.Metrics = pingPongMetrics(res.Timed, lat)
	return res, nil
}

// pingPongMetrics are ping-pong's figures for the round trips of
// latencies lat (sorted in place) timed in t.
func pingPongMetrics(t Span, lat []time.Duration) []Metric {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	us := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Nanoseconds()) / 1e3 }
	return []Metric{
		{Name: "rate", Unit: "rt/s", Value: float64(len(lat)) / t.Wall.Seconds(), Higher: true},
		{Name: "p50", Unit: "µs", Value: us(0.50)},
		{Name: "p99", Unit: "µs", Value: us(0.99)},
		{Name: "cpu_per_100k", Unit: "CPU-s/100k", Value: t.CPU.Seconds() / float64(len(lat)) * 1e5},
	}
}

// Setup opens p.Setups connections one after another, each carrying one
// byte each way before the client closes: connections/s and CPU µs each.
func Setup(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error) {
	res := Result{Workload: "setup", Network: n.Name(), MTU: n.MTU(), Family: n.Family()}
	ln, err := n.Listen(port)
	if err != nil {
		return res, opErr("setup", n.Name(), "listen", err)
	}
	defer ln.Close()
	type srvRes struct {
		served int
		err    error
	}
	srv := make(chan srvRes, 1)
	go func() {
		b := make([]byte, 1)
		for i := 0; i < p.Setups; i++ {
			c, err := ln.Accept()
			if err != nil {
				srv <- srvRes{i, fmt.Errorf("accept %d: %w", i, err)}
				return
			}
			_, err = io.ReadFull(c, b)
			if err == nil {
				b[0] ^= 0xff
				_, err = c.Write(b)
			}
			if err == nil {
				// The client closes first (and holds TIME-WAIT).
				if _, e := c.Read(b); !errors.Is(e, io.EOF) {
					err = fmt.Errorf("want EOF, got %v", e)
				}
			}
			c.Close()
			if err != nil {
				srv <- srvRes{i, fmt.Errorf("connection %d: %w", i, err)}
				return
			}
		}
		srv <- srvRes{p.Setups, nil}
	}()
	d0 := n.Drops()
	u := ReadUsage()
	b := make([]byte, 1)
	for i := 0; i < p.Setups; i++ {
		c, err := n.Dial(ctx, port)
		if err != nil {
			return res, opErr("setup", n.Name(), fmt.Sprintf("dial %d", i), err)
		}
		b[0] = byte(i)
		if _, err := c.Write(b); err != nil {
			c.Close()
			return res, opErr("setup", n.Name(), fmt.Sprintf("write %d", i), err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			c.Close()
			return res, opErr("setup", n.Name(), fmt.Sprintf("read %d", i), err)
		}
		if b[0] != ^byte(i) {
			c.Close()
			return res, fmt.Errorf("setup on %s: connection %d got %#x, want %#x", n.Name(), i, b[0], ^byte(i))
		}
		if err := c.Close(); err != nil {
			return res, opErr("setup", n.Name(), fmt.Sprintf("close %d", i), err)
		}
	}
	var s srvRes
	select {
	case s = <-srv:
	case <-ctx.Done():
		return res, opErr("setup", n.Name(), "waiting for the server", ctx.Err())
	}
	res.Timed = u.Since()
	res.Drops = n.Drops().Sub(d0)
	if s.err != nil {
		return res, opErr("setup", n.Name(), "server", s.err)
	}
	res.Checked = int64(s.served)
	res.Metrics = []Metric{
		{Name: "rate", Unit: "conn/s", Value: float64(p.Setups) / res.Timed.Wall.Seconds(), Higher: true},
		{Name: "cpu_per_conn", Unit: "CPU-µs", Value: float64(res.Timed.CPU.Microseconds()) / float64(p.Setups)},
	}
	return res, nil
}

// manyClients is the client side of the many workload: one goroutine per
// connection (run), the same code on every network.
//
// Its functions keep their frames small (dialling, the round trips and
// error formatting each in a function of its own, returned from before
// the goroutine parks for long): a goroutine starts with a 2 KiB stack
// and doubles it when a call chain outgrows it, and a fat frame at the
// bottom of ten thousand goroutines made each of them 4 KiB on every
// network. What is left on top of these frames is the network's own
// blocking calls (its dial and read paths), which is what the workload
// should measure.
type manyClients struct {
	ctx                    context.Context
	n                      netw.Network
	p                      Params
	port                   uint16
	sem                    chan struct{}
	start, closeNow        chan struct{}
	opened, finished, done sync.WaitGroup
	errs                   chan error
}

// run is connection i's goroutine: dial, wait for the start, do the
// round trips, hold the connection open until every one is done.
func (m *manyClients) run(i int) {
	defer m.done.Done()
	c := m.dial(i)
	if c == nil {
		return
	}
	<-m.start
	ok := m.rounds(c, i)
	// Every connection stays open until all have done their round trips,
	// so that all of them are open at once.
	m.finished.Done()
	if ok {
		<-m.closeNow
	}
	c.Close()
}

// dial opens connection i with at most DialParallel dials in flight; nil
// when it failed (recorded, and counted as finished).
//
//go:noinline
func (m *manyClients) dial(i int) net.Conn {
	m.sem <- struct{}{}
	c, err := m.n.Dial(m.ctx, m.port)
	<-m.sem
	m.opened.Done()
	if err != nil {
		m.finished.Done()
		m.errs <- numberedErr("dial", uint64(i), err)
		return nil
	}
	return c
}

// rounds does connection i's ping-pongs; false (recorded) on an error.
//
//go:noinline
func (m *manyClients) rounds(c net.Conn, i int) bool {
	buf := make([]byte, m.p.MsgSize)
	for r := 0; r < m.p.ManyRounds; r++ {
		if err := roundTrip(c, buf, uint64(i)<<8|uint64(r)); err != nil {
			m.errs <- numberedErr("connection", uint64(i), err)
			return false
		}
	}
	return true
}

// RemoteEcho is implemented by networks that serve the many workload's
// echo side from another process (the kernel's, whose file-descriptor
// limit does not hold both ends of 10k connections in one process). Its
// peak RSS is added to the client's.
type RemoteEcho interface {
	// StartEcho starts an echo server on port; stop ends it and returns
	// its RSS before the first connection and its peak RSS, in bytes.
	StartEcho(port uint16, msgSize int) (stop func() (baseRSS, peakRSS int64, err error), err error)
}

// Many opens p.ManyConns connections (at most p.DialParallel dials in
// flight), holds them all open at once, then has each do p.ManyRounds
// ping-pongs and close: total time, peak RSS, and memory per connection
// (peak RSS less the RSS before the first dial, over the connections).
func Many(ctx context.Context, n netw.Network, p Params, port uint16) (Result, error) {
	res := Result{Workload: "many", Network: n.Name(), MTU: n.MTU(), Family: n.Family()}
	var remote func() (int64, int64, error)
	srvErr := make(chan error, 1)
	if re, ok := n.(RemoteEcho); ok {
		stop, err := re.StartEcho(port, p.MsgSize)
		if err != nil {
			return res, opErr("many", n.Name(), "echo server", err)
		}
		remote = stop
		defer func() {
			if remote != nil {
				_, _, _ = remote()
			}
		}()
	} else {
		ln, err := n.Listen(port)
		if err != nil {
			return res, opErr("many", n.Name(), "listen", err)
		}
		defer ln.Close()
		go func() {
			var wg sync.WaitGroup
			var once sync.Once
			for i := 0; i < p.ManyConns; i++ {
				c, err := ln.Accept()
				if err != nil {
					once.Do(func() { srvErr <- fmt.Errorf("accept %d: %w", i, err) })
					break
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer c.Close()
					if err := Echo(c, p.MsgSize); err != nil {
						once.Do(func() { srvErr <- err })
					}
				}()
			}
			wg.Wait()
			once.Do(func() { srvErr <- nil })
		}()
	}
	// Reset the peak first: VmHWM is then at least this RSS.
	ResetPeak()
	rss0, _ := Memory()
	d0 := n.Drops()
	u := ReadUsage()
	cl := &manyClients{ctx: ctx, n: n, p: p, port: port,
		sem: make(chan struct{}, p.DialParallel), start: make(chan struct{}), closeNow: make(chan struct{}),
		errs: make(chan error, p.ManyConns)}
	start, closeNow, errs := cl.start, cl.closeNow, cl.errs
	opened, finished, done := &cl.opened, &cl.finished, &cl.done
	opened.Add(p.ManyConns)
	finished.Add(p.ManyConns)
	done.Add(p.ManyConns)
	for i := 0; i < p.ManyConns; i++ {
		go cl.run(i)
	}
	opened.Wait()
	rssOpen, _ := Memory()
	close(start)
	finished.Wait()
	rssUsed, _ := Memory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if p.AtPeak != nil {
		p.AtPeak()
	}
	close(closeNow)
	done.Wait()
	res.Timed = u.Since()
	_, hwm := Memory()
	if remote != nil {
		base, peak, err := remote()
		remote = nil
		if err != nil {
			return res, opErr("many", n.Name(), "echo server", err)
		}
		hwm += peak
		rss0 += base
	} else {
		select {
		case err := <-srvErr:
			if err != nil {
				return res, opErr("many", n.Name(), "server", err)
			}
		case <-ctx.Done():
			return res, opErr("many", n.Name(), "waiting for the server", ctx.Err())
		}
	}
	res.Drops = n.Drops().Sub(d0)
	close(errs)
	failed := 0
	var first error
	for err := range errs {
		if first == nil {
			first = err
		}
		failed++
	}
	if first != nil {
		return res, fmt.Errorf("many on %s: %d of %d connections failed; first: %w", n.Name(), failed, p.ManyConns, first)
	}
	res.Checked = int64(p.ManyConns * p.ManyRounds)
	// The kernel's RSS counters are per-CPU approximations (tens of pages
	// of slack), so a tiny run can read a peak just below its start.
	per := float64(max(0, hwm-rss0)) / float64(p.ManyConns)
	res.Metrics = []Metric{
		{Name: "total_time", Unit: "s", Value: res.Timed.Wall.Seconds()},
		{Name: "peak_rss", Unit: "MiB", Value: float64(hwm) / (1 << 20)},
		{Name: "mem_per_conn", Unit: "KiB", Value: per / 1024},
		{Name: "rss_all_open", Unit: "MiB", Value: float64(rssOpen) / (1 << 20)},
		{Name: "rss_all_used", Unit: "MiB", Value: float64(rssUsed) / (1 << 20)},
		{Name: "go_heap", Unit: "MiB", Value: float64(ms.HeapInuse) / (1 << 20)},
		{Name: "go_stacks", Unit: "MiB", Value: float64(ms.StackInuse) / (1 << 20)},
		{Name: "cpu", Unit: "CPU-s", Value: res.Timed.CPU.Seconds()},
	}
	return res, nil
}
