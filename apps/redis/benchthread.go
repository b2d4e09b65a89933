package redis

import (
	"errors"
	"slices"
	"time"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// BenchThread is one of redis-benchmark's ae event loops
// (execBenchmarkThread's aeMain, or the main thread's with one thread):
// its own clients, drawing on the Benchmark's shared test. It is the
// poller of its core.
type BenchThread struct {
	b    *Benchmark
	net  benchNet
	wake func(at time.Duration)
	// share is the thread's clients (client k is thread k % N's).
	share int

	clients []*benchClient
	dead    int // clients failed this turn, still in clients
	events  []benchEvent
	// armed are the clients whose requests wait for the next turn's
	// writable event (send), and writing those taken this turn.
	armed, writing []*benchClient

	// opened counts connections started; connecting those not yet
	// established.
	opened, connecting int

	// restart asks the next Poll to start the tests again (ResetStats
	// has no meter to send with); kick to send on every client, the
	// test having been started by another thread.
	restart, kick bool
	started       bool
	// stopped says the loop stopped for the running test (aeStop);
	// stopAt is when a thread waiting for its throughput tick stops.
	stopped bool
	stopAt  time.Duration

	// replies are the replies it received in the window, cmdDone those
	// to each test's requests.
	replies uint64
	cmdDone []uint64
}

type benchClient struct {
	// c is the connection of a generator on the stack's lcore, s the
	// socket of one on a thread of its own.
	c      *tcp.Conn
	s      *lstack.Socket
	open   bool
	closed bool
	armed  bool // on BenchThread.armed: requests built, not yet written
	// inflight are the requests sent and not answered, oldest first,
	// from head on.
	inflight []request
	head     int
	rbuf     []byte
	wbuf     []byte
}

// request is one request in flight.
type request struct {
	at    time.Duration
	cmd   int
	epoch uint32
	// unsent: built and waiting for the writable event; at is then
	// set when it is written.
	unsent bool
}

// Poll runs one turn of the thread's event loop.
func (l *BenchThread) Poll(m hw.Meter) (bool, time.Duration) {
	b := l.b
	if !l.started {
		l.started = true
		l.connect(m)
		return true, hw.NoDeadline
	}
	worked := false
	if l.restart {
		l.restart = false
		b.startPhase(m, l)
		worked = true
	}
	if l.kick {
		l.kick = false
		l.sendAll(m)
		worked = true
	}
	l.events = l.net.ready(m, l.events[:0], len(l.armed) > 0)
	if l.writeArmed(m) {
		worked = true
	}
	for _, ev := range l.events {
		bc := ev.bc
		if bc.closed {
			continue
		}
		worked = true
		if ev.failed {
			l.fail(m, bc)
			continue
		}
		if !bc.open && l.net.connected(bc) {
			bc.open = true
			l.connecting--
			l.connect(m)
			// Each client starts as soon as it is connected, as the
			// real tool's do: one slow handshake holds up nobody.
			switch {
			case b.phase >= len(b.cmds):
			case !b.cmds[b.phase].running:
				b.startPhase(m, l)
			default:
				l.send(m, bc)
			}
		}
		if ev.readable {
			l.receive(m, bc)
			if bc.closed {
				continue
			}
		}
		if ev.writable && !bc.closed {
			l.flush(m, bc)
		}
	}
	if l.dead > 0 {
		l.clients = slices.DeleteFunc(l.clients, func(bc *benchClient) bool { return bc.closed })
		l.dead = 0
	}
	next := hw.NoDeadline
	if b.draining && !l.stopped {
		// The loop's time event: showThroughput stops it once the test
		// is done (ae runs time events after the turn's file events).
		if m.Now() >= l.stopAt {
			l.stop(m)
		} else {
			next = l.stopAt
		}
	}
	// Writes armed this turn go out in the next: the loop must not
	// sleep with them.
	worked = worked || len(l.armed) > 0
	l.net.done(m, worked)
	return worked, next
}

// stop stops the loop for the running test.
func (l *BenchThread) stop(m hw.Meter) {
	l.stopped = true
	l.b.threadStopped(m, l)
}

// writeArmed is the writable events of the turn: each client armed in
// an earlier turn writes its requests (redis-benchmark.c writeHandler)
// and starts their clocks, as writeHandler sets c->start when it writes
// a request's first byte. redis-benchmark's latency therefore leaves out
// the time a request waited for its writable event, behind the other
// clients' events of the turn that armed it; so does this one.
func (l *BenchThread) writeArmed(m hw.Meter) bool {
	if len(l.armed) == 0 {
		return false
	}
	l.writing, l.armed = l.armed, l.writing[:0]
	now := m.Now()
	for _, bc := range l.writing {
		bc.armed = false
		if bc.closed {
			continue
		}
		for i := bc.head; i < len(bc.inflight); i++ {
			if bc.inflight[i].unsent {
				bc.inflight[i].at, bc.inflight[i].unsent = now, false
			}
		}
		l.flush(m, bc)
	}
	clear(l.writing)
	l.writing = l.writing[:0]
	return true
}

// maxConnecting bounds handshakes in flight while the clients connect,
// so that a thousand SYNs do not overflow the neighbour cache's queue
// or the server's SYN backlog before the first one is answered (the real
// tool's clients are created one after another, each costing a
// connect(2) and a first write, which spreads them out the same way).
// Each thread bounds its own.
const maxConnecting = 64

// connect starts the thread's connections until maxConnecting are in
// flight; its j-th client is the net's connection j.
func (l *BenchThread) connect(m hw.Meter) {
	for l.opened < l.share && l.connecting < maxConnecting {
		i := l.opened
		l.opened++
		bc := &benchClient{}
		if err := l.net.connect(m, i, bc); err != nil {
			l.b.connFails++
			continue
		}
		l.clients = append(l.clients, bc)
		l.connecting++
	}
}

// fail drops a client whose connection failed. Its unanswered requests
// of the running test are given back, for the other clients to send.
func (l *BenchThread) fail(m hw.Meter, bc *benchClient) {
	if bc.closed {
		return
	}
	b := l.b
	b.errors++
	if !bc.open {
		l.connecting--
		b.connFails++
	}
	bc.closed, bc.open = true, false
	for _, r := range bc.inflight[bc.head:] {
		b.inFlight--
		if r.epoch == b.epoch {
			b.cmds[r.cmd].outstanding--
			if r.cmd == b.phase {
				b.sent--
			}
		}
	}
	bc.inflight, bc.head = nil, 0
	l.dead++ // taken out of clients after the turn's events
	l.net.close(m, bc)
	l.connect(m)
	if b.phase < len(b.cmds) && b.cmds[b.phase].running {
		for _, other := range l.clients {
			if other.open {
				l.send(m, other)
			}
		}
		// The other threads' clients, which the real tool's spin
		// writeHandler on, may take what this thread's could not.
		for _, o := range b.loops {
			if o != l && len(b.loops) > 1 {
				o.kick = true
				o.wake(m.Now())
			}
		}
	}
}

// sendAll fills every connected client's pipeline.
func (l *BenchThread) sendAll(m hw.Meter) {
	for _, bc := range l.clients {
		if bc.open {
			l.send(m, bc)
		}
	}
}

// send fills the client's pipeline with the running test's requests,
// as long as the test's budget, shared by every thread, lasts
// (writeHandler's atomicGetIncr of requests_issued).
func (l *BenchThread) send(m hw.Meter, bc *benchClient) {
	b := l.b
	if b.phase >= len(b.cmds) || !b.cmds[b.phase].running {
		return
	}
	now := m.Now()
	sent := false
	for len(bc.inflight)-bc.head < b.cfg.Pipeline && b.sent < b.cfg.Requests {
		bc.wbuf = b.command(bc.wbuf, b.cfg.Commands[b.phase])
		m.Charge(CostBenchRequest, 1)
		bc.inflight = append(bc.inflight, request{at: now, cmd: b.phase, epoch: b.epoch, unsent: true})
		b.sent++
		b.inFlight++
		b.cmds[b.phase].outstanding++
		sent = true
	}
	if sent {
		// redis-benchmark.c switches the socket to writable for the
		// batch (resetClient: delete writable, delete readable, create
		// writable) and back to readable once it is written
		// (writeHandler: delete writable, create readable); ae.c's
		// aeCreateFileEvent and aeDeleteFileEvent are an epoll_ctl each.
		// The write waits for the writable event, in the next turn of
		// the loop (writeArmed): strace -c counts two epoll_wait calls a
		// request at one client, one for each event.
		l.net.control(m, benchEpollCtls)
		if !bc.armed {
			bc.armed = true
			l.armed = append(l.armed, bc)
		}
	}
}

// benchEpollCtls is the epoll_ctl calls redis-benchmark makes per
// pipeline of requests (see send).
const benchEpollCtls = 5

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

func (l *BenchThread) flush(m hw.Meter, bc *benchClient) {
	rest, err := l.net.write(m, bc, bc.wbuf)
	switch {
	case err != nil:
		l.fail(m, bc)
	case len(rest) == 0:
		bc.wbuf = bc.wbuf[:0]
	default:
		bc.wbuf = append(bc.wbuf[:0], rest...)
	}
}

func (l *BenchThread) receive(m hw.Meter, bc *benchClient) {
	b := l.b
	var err error
	if bc.rbuf, err = l.net.read(m, bc, bc.rbuf); err != nil {
		l.fail(m, bc)
		return
	}
	now := m.Now()
	off := 0
	ended := false
	for bc.head < len(bc.inflight) {
		kind, n, err := resp.SkipReply(bc.rbuf[off:])
		if errors.Is(err, resp.ErrIncomplete) {
			break
		}
		if err != nil {
			l.fail(m, bc)
			return
		}
		if kind == resp.ErrorReply {
			b.errors++
		}
		off += n
		// hiredis's reader scans the reply and builds a reply object
		// that readHandler records and frees (redis-benchmark.c).
		m.Charge(appcost.ParseByte, int64(n))
		m.Charge(CostBenchReply, 1)
		r := bc.inflight[bc.head]
		bc.head++
		b.inFlight--
		b.replies++
		l.replies++
		if r.epoch != b.epoch {
			continue // sent before the window: only the total counts it
		}
		st := &b.cmds[r.cmd]
		st.outstanding--
		d := now - r.at
		st.lat.Record(d)
		b.all.Record(d)
		st.done++
		l.cmdDone[r.cmd]++
		if r.cmd == b.phase {
			b.done++
			if b.done >= b.cfg.Requests {
				ended = true
			}
		}
	}
	if bc.head == len(bc.inflight) {
		bc.inflight, bc.head = bc.inflight[:0], 0
	} else if bc.head > len(bc.inflight)/2 {
		n := copy(bc.inflight, bc.inflight[bc.head:])
		bc.inflight, bc.head = bc.inflight[:n], 0
	}
	bc.rbuf = append(bc.rbuf[:0], bc.rbuf[off:]...)
	if ended {
		b.lastReply(m, l)
		return
	}
	l.send(m, bc)
}
