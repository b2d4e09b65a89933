package lstack

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/sockring"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Gazelle's asymmetric model: application threads that are not the stack's
// lcore (MySQL's thread per connection) use sockets owned by stack
// threads. A routing table (Router) maps the application's fd to the
// Socket, and through it to the Bridge of the instance that owns the
// connection; the two sides meet on a socket's pair of lock-free
// single-producer single-consumer byte rings (Gazelle's sock->send_ring
// and sock->recv_ring), a stack/sockring.Pipe, the same bridge
// stack/gonet's net.Conn uses. The stack thread does all protocol work
// (the pipe's Service); an application thread only copies bytes into and
// out of the rings, asks the stack thread to serve its socket (Gazelle's
// rpc_call_send, a call on the bridge's request list) and sleeps on a
// semaphore when it has nothing to read (lstack's sem_timedwait, woken
// with sem_post, a futex on both ends).
//
// What a side on another core may see, and when, is not decided here:
// each ring and each socket's calls are handed to their consumer by a
// sockring.Handoff the binding supplies (SetHandoffs; in virtual time the
// rig's schedules the publication at the producer's clock, so a reply is
// never sent before its thread wrote it). Without one they are handed
// over at once, as in real time.
//
// Every operation is charged as lstack does it: on the application's
// core an intercepted socket call, a ring operation per call that moved
// bytes, a copy per byte and a futex sleep; on the stack thread a socket
// call served, ring operations and a futex wake. The application's side
// is charged on the meter its instance's SetAppMeter decorator makes of
// the thread's, the stack thread's on the meter its Poll is given; a
// binding that stands for the kernel's stack prices both as the
// kernel's (system calls, copy_to/from_user, no ring, a softirq's direct
// wake-up).

// RingBytes is the most bytes each of a socket's send and receive rings
// holds. Gazelle sizes them in pbufs (send_ring_size, recv_ring_size in
// lstack.conf, a few hundred of up to 2 KiB each); the rings grow to it
// only as a connection needs (sockring.Ring), so an idle one holds a
// cache line.
const RingBytes = 256 << 10

// ErrRingFull is returned by Socket.Write when the socket's send ring has
// no free byte: the stack thread is behind. The caller waits and retries,
// as a non-blocking send's EAGAIN.
var ErrRingFull = errors.New("lstack: send ring full")

// BridgeStats are a bridge's counters: the stack thread's side of the
// asymmetric model.
type BridgeStats struct {
	// Accepted counts connections accepted for application threads;
	// Connects the connections they opened (Connect).
	Accepted uint64 `json:"accepted"`
	Connects uint64 `json:"connects"`
	// SendRequests counts requests served for application threads
	// (Gazelle's rpc_call_send: send, close, refill); SendBytes the
	// bytes written to TCP from send rings.
	SendRequests uint64 `json:"send_requests"`
	SendBytes    uint64 `json:"send_bytes"`
	// RecvBytes counts bytes moved from TCP to sockets' receive rings;
	// RecvRingFull counts times a receive ring had no room, leaving data
	// in TCP until the application reads (back-pressure, not a loss).
	RecvBytes    uint64 `json:"recv_bytes"`
	RecvRingFull uint64 `json:"recv_ring_full"`
	// Wakeups counts sleeping application threads woken.
	Wakeups uint64 `json:"wakeups"`
	// SendBlocked counts times TCP's send buffer left bytes in a send
	// ring; the rest is sent on tcp.EventWritable.
	SendBlocked uint64 `json:"send_blocked"`
	// Closed counts sockets closed by their application; Errors
	// connections that failed (reset, timeout).
	Closed uint64 `json:"closed"`
	Errors uint64 `json:"errors"`
}

// SocketStats are an application thread's counters for its sockets.
type SocketStats struct {
	// Reads and Writes count socket calls; WouldBlock reads that found
	// nothing.
	Reads      uint64 `json:"reads"`
	Writes     uint64 `json:"writes"`
	WouldBlock uint64 `json:"would_block"`
	// SendRingFull counts writes refused because the send ring was full.
	SendRingFull uint64 `json:"send_ring_full"`
	// Sleeps counts waits that put the thread to sleep.
	Sleeps uint64 `json:"sleeps"`
}

// Router is Gazelle's routing table from an application fd to the socket
// and stack instance that own it. One Router serves a process; its fds
// are small integers handed out in order, as the kernel's are.
type Router struct {
	fds  map[int]*Socket
	next int
}

// NewRouter returns an empty table whose first fd is first (a process's
// fds 0-2 are its standard streams).
func NewRouter(first int) *Router {
	return &Router{fds: map[int]*Socket{}, next: first}
}

// bind gives s the next fd.
func (r *Router) bind(s *Socket) int {
	fd := r.next
	r.next++
	r.fds[fd] = s
	s.fd = fd
	return fd
}

// Lookup returns the socket behind fd.
func (r *Router) Lookup(fd int) (*Socket, bool) {
	s, ok := r.fds[fd]
	return s, ok
}

// Len returns the number of open fds.
func (r *Router) Len() int { return len(r.fds) }

// FDs returns the open fds, sorted.
func (r *Router) FDs() []int {
	out := make([]int, 0, len(r.fds))
	for fd := range r.fds {
		out = append(out, fd)
	}
	sort.Ints(out)
	return out
}

// Socket is a connection as an application thread sees it: an fd whose
// bytes cross a pipe's rings to and from the stack thread that owns it.
type Socket struct {
	b  *Bridge
	p  sockring.Pipe
	fd int
	// calls are the socket's requests to the stack thread, handed off
	// like its bytes; pending says the socket has a request the stack
	// thread has not served, queued that it is on the bridge's ready
	// list, seq the order of its request among the bridge's.
	calls           *sockring.Calls
	pending, queued bool
	seq             uint64
	// toStack are the hand-offs of the send ring and the calls, which
	// leave the stack thread's catch-up when it is done with the socket.
	toStack [2]StackHandoff
	// failed says the connection's error was counted; done that the
	// stack thread finished with it.
	failed, done bool
	// waiter wakes the application thread sleeping on the socket.
	waiter func(at time.Duration)
	// app is the application's meter while one of its calls runs, for
	// the pipe's kick (sockring.Driver has no meter).
	app hw.Meter
	// caller is the meter of the thread's last call, undecorated, for
	// a kernel binding's transmit on the caller's core (SetSenderMeter).
	caller hw.Meter
	// dial is the connection an application thread opened (Connect),
	// nil for an accepted one; dialed says its handshake completed.
	dial   *Dial
	dialed bool
	// ep is the epoll the socket reports its readiness to (nil: the
	// thread waits on the socket itself, Wait); epReady says it is on
	// ep's ready list.
	ep      *Epoll
	epReady bool
	stats   SocketStats
}

// FD returns the socket's fd in its router.
func (s *Socket) FD() int { return s.fd }

// Conn returns the TCP connection (the stack thread's object; an
// application thread must not call it).
func (s *Socket) Conn() *tcp.Conn { return s.p.Conn() }

// Stats returns the application side's counters.
func (s *Socket) Stats() SocketStats { return s.stats }

// Bridge is the stack thread's end of the asymmetric model for one
// instance: a poller that runs on the instance's lcore after the instance
// itself, accepts connections for the application, serves the sockets'
// requests and readiness (sockring.Pipe.Service) and wakes the threads
// that sleep on them. It is the only consumer of the instance's TCP
// readiness events.
type Bridge struct {
	in     *Instance
	router *Router
	bell   func(at time.Duration)
	hand   Handoffs
	ln     *tcp.Listener
	socks  map[*tcp.Conn]*Socket
	// ready are the sockets with a request (Gazelle's lock-free rpc
	// queue; in virtual time one list serves) that a hand-off delivered
	// something to since the stack thread last looked at them, in no
	// order; spare is the other list's storage. A request is served,
	// in the order the threads called (seq counts the calls), once its
	// call and the bytes written before it reached this core; each is
	// charged a ring operation at both ends. Without hand-offs (real
	// time) a socket is ready once it calls and stays on the list until
	// served.
	ready, spare []*Socket
	seq          uint64
	onAccept     func(fd int, s *Socket)
	// set is the bridge's own ready list: several bridges on one
	// instance (two generator threads on one stack core) each see the
	// events of their own sockets, where the stack's one ready list
	// went to whichever bridge polled first.
	set    tcp.EventSet
	events []tcp.Event
	svc    sockring.ServiceStats
	stats  BridgeStats
	// m is the stack thread's meter while Poll runs, for the pipes'
	// wake-ups and clock.
	m     hw.Meter
	clock sockring.Clock
}

// NewBridge returns the bridge of in. router is the process's fd table;
// doorbell wakes the instance's lcore at a time (in virtual time, the
// core's Wake): an application thread rings it when it calls the stack
// thread.
func NewBridge(in *Instance, router *Router, doorbell func(at time.Duration)) (*Bridge, error) {
	if in == nil || router == nil || doorbell == nil {
		return nil, errors.New("lstack: NewBridge needs an instance, a router and a doorbell")
	}
	b := &Bridge{in: in, router: router, bell: doorbell, socks: map[*tcp.Conn]*Socket{}}
	b.clock = b.now
	in.bridges = append(in.bridges, b)
	return b, nil
}

// SetHandoffs makes the hand-offs of the rings and calls of sockets
// accepted or connected from now on (nil: at once). A binding in virtual
// time gives one that schedules each delivery at its producer's clock
// (internal/simhost.BindBridge).
func (b *Bridge) SetHandoffs(h Handoffs) { b.hand = h }

func (b *Bridge) now() time.Duration {
	if b.m == nil {
		return 0
	}
	return b.m.Now()
}

// Listen listens on port of the instance's address (Gazelle's
// listen_shadow: every instance of a host listens), handing each
// accepted connection to onAccept with its new fd, on the stack thread.
func (b *Bridge) Listen(port uint16, backlog int, onAccept func(fd int, s *Socket)) error {
	ln, err := b.in.Listen(port, backlog)
	if err != nil {
		return fmt.Errorf("lstack: bridge listen on port %d: %w", port, err)
	}
	b.set.AddListener(ln, nil)
	b.ln, b.onAccept = ln, onAccept
	return nil
}

// Instance returns the instance the bridge serves.
func (b *Bridge) Instance() *Instance { return b.in }

// Stats returns the bridge's counters.
func (b *Bridge) Stats() BridgeStats {
	st := b.stats
	st.SendBytes, st.SendBlocked = b.svc.SendBytes, b.svc.SendBlocked
	st.RecvBytes, st.RecvRingFull = b.svc.RecvBytes, b.svc.RecvRingFull
	return st
}

// ResetStats zeroes the counters.
func (b *Bridge) ResetStats() { b.stats, b.svc = BridgeStats{}, sockring.ServiceStats{} }

// Open returns the number of open sockets.
func (b *Bridge) Open() int { return len(b.socks) }

// Poll runs one turn of the stack thread's side: requests first (their
// bytes then leave in the instance's next turn), then readiness. A
// request whose call has not reached the core yet waits for its
// hand-off's doorbell, so Poll sets no deadline.
func (b *Bridge) Poll(m hw.Meter) (bool, time.Duration) {
	b.m = m
	worked := b.serveRequests(m)
	b.events = b.set.Events(b.events[:0])
	for _, ev := range b.events {
		worked = true
		switch {
		case ev.Listener != nil && ev.Listener == b.ln:
			b.accept(m)
		case ev.Conn != nil:
			if s := b.socks[ev.Conn]; s != nil {
				b.service(m, s)
				b.checkDialed(m, s)
			}
		}
	}
	return worked, hw.NoDeadline
}

// initSocket makes s's pipe and calls, with their hand-offs.
func (b *Bridge) initSocket(s *Socket) {
	cfg := sockring.Config{RxRing: RingBytes, TxRing: RingBytes, Clock: b.clock}
	var calls sockring.Handoff
	if b.hand != nil {
		arrived := s.arrived
		s.toStack[0] = b.hand.ToStack(b.bell, arrived)
		s.toStack[1] = b.hand.ToStack(b.bell, arrived)
		cfg.RxHandoff, cfg.TxHandoff, calls = b.hand.ToApp(s.published), s.toStack[0], s.toStack[1]
	}
	s.p.Init(cfg, (*driver)(s))
	s.calls = sockring.NewCalls(calls)
}

// accept takes every pending connection and binds it to an fd.
func (b *Bridge) accept(m hw.Meter) {
	for {
		c, ok := b.ln.Accept()
		if !ok {
			return
		}
		b.chargeStack(m, 1)
		s := &Socket{b: b}
		b.initSocket(s)
		s.p.Attach(c, false)
		b.socks[c] = s
		b.set.Add(c, nil)
		fd := b.router.bind(s)
		b.stats.Accepted++
		if b.onAccept != nil {
			b.onAccept(fd, s)
		}
	}
}

// serveRequests serves, in the order their threads called, the
// requests whose call, and the bytes written before it, reached the
// core by its clock; the others wait for their next delivery, which
// lists them again. It reports whether it served any.
func (b *Bridge) serveRequests(m hw.Meter) bool {
	now := m.Now()
	if b.hand != nil {
		b.hand.CatchUp(now)
	}
	if len(b.ready) == 0 {
		return false
	}
	worked := false
	list := b.ready
	if len(list) > 1 {
		slices.SortFunc(list, func(x, y *Socket) int { return cmp.Compare(x.seq, y.seq) })
	}
	// A delivery while the list is served (a send ring's catch-up in
	// service) lists its socket on the other.
	b.ready, b.spare = b.spare[:0], nil
	for _, s := range list {
		s.calls.Sync(now)
		s.p.Tx().Sync(now)
		if s.done {
			s.pending, s.queued = false, false
			s.leave()
			continue
		}
		if s.calls.Arrived() == 0 || s.p.Tx().InFlight() > 0 {
			if b.hand == nil {
				b.ready = append(b.ready, s)
			} else {
				s.queued = false
			}
			continue
		}
		worked = true
		s.pending, s.queued = false, false
		s.calls.Take()
		b.chargeRing(m, 1) // the request's dequeue
		b.stats.SendRequests++
		b.chargeStack(m, 1)
		if s.dial != nil && s.p.Conn() == nil && !s.failed {
			b.dialNow(m, s)
		}
		b.service(m, s)
	}
	clear(list)
	b.spare = list[:0]
	return worked
}

// arrived is the delivery of one of s's hand-offs to the stack thread:
// a socket with a request goes on the ready list.
func (s *Socket) arrived() {
	if s.pending && !s.queued {
		s.queued = true
		s.b.ready = append(s.b.ready, s)
	}
}

// finished marks s done: the stack thread has finished with it. One
// with a request is looked at by the next poll (which drops it), the
// others leave the catch-up at once.
func (b *Bridge) finished(s *Socket) {
	s.done = true
	switch {
	case !s.pending:
		s.leave()
	case !s.queued:
		s.queued = true
		b.ready = append(b.ready, s)
	}
}

// leave takes s's hand-offs out of the stack thread's catch-up.
func (s *Socket) leave() {
	for i, h := range s.toStack {
		if h != nil {
			h.Leave()
			s.toStack[i] = nil
		}
	}
}

// service runs the socket's pipe: the send ring into TCP, TCP into the
// receive ring, half-close and close. A ring operation is charged for
// each ring it moved bytes through.
func (b *Bridge) service(m hw.Meter, s *Socket) {
	if s.done {
		return
	}
	if s.p.Conn() == nil {
		// A connect the stack refused: nothing to serve but its close.
		if s.p.Closed() {
			b.finished(s)
			delete(b.router.fds, s.fd)
			b.stats.Closed++
		}
		return
	}
	s.p.Tx().Sync(m.Now())
	sent, recv := b.svc.SendBytes, b.svc.RecvBytes
	finished := s.p.Service(&b.svc)
	if b.svc.SendBytes != sent {
		b.chargeRing(m, 1)
	}
	if b.svc.RecvBytes != recv {
		b.chargeRing(m, 1)
	}
	if s.p.Err() != nil && !s.failed {
		s.failed = true
		b.stats.Errors++
	}
	if finished {
		b.finished(s)
		delete(b.socks, s.p.Conn())
		delete(b.router.fds, s.fd)
		b.stats.Closed++
	}
}

// wake wakes the thread sleeping on s, if one is: a sem_post that finds
// a waiter is a futex wake system call, and the scheduler's
// try_to_wake_up runs (and an IPI reaches the thread's core).
func (b *Bridge) wake(m hw.Meter, s *Socket) {
	w := s.waiter
	if w == nil {
		return
	}
	s.waiter = nil
	m.Charge(hw.CostSyscall, 1)
	m.Charge(hw.CostSyscallFutex, 1)
	m.Charge(hw.CostWakeup, 1)
	b.stats.Wakeups++
	w(m.Now())
}

// chargeStack charges the stack thread's handling of n requests.
func (b *Bridge) chargeStack(m hw.Meter, n int64) { m.Charge(CostSocketCall, n) }

// chargeRing charges n ring operations on the stack thread.
func (b *Bridge) chargeRing(m hw.Meter, n int64) { m.Charge(CostRingOp, n) }

// post puts the socket's call on the request list and rings the stack
// thread; m is the application's meter, already decorated
// (Socket.meter).
func (b *Bridge) post(m hw.Meter, s *Socket) {
	if s.pending || s.done {
		return
	}
	s.pending = true
	b.seq++
	s.seq = b.seq
	if b.hand == nil {
		s.queued = true
		b.ready = append(b.ready, s)
	}
	s.calls.Post(m.Now())
	m.Charge(CostRingOp, 1) // the request's enqueue
	b.bell(m.Now())
}

// driver is a socket as its pipe's sockring.Driver.
type driver Socket

// Kick implements sockring.Driver: the application's call to the stack
// thread (a close, a shutdown, room made in a stalled receive ring).
func (d *driver) Kick() {
	s := (*Socket)(d)
	if s.app != nil {
		s.b.post(s.app, s)
	}
}

// Readable implements sockring.Driver: the stack thread put bytes, EOF
// or an error in the receive ring.
func (d *driver) Readable() {
	s := (*Socket)(d)
	if s.ep != nil {
		s.ep.notify(s.b.m, s)
		return
	}
	if s.b.m != nil {
		s.b.wake(s.b.m, s)
	}
}

// Writable implements sockring.Driver. An application thread that finds
// its send ring full yields and retries; nothing sleeps on it.
func (d *driver) Writable() {}

// published is the receive ring's hand-off doorbell: bytes the stack
// thread wrote reached the application's core. A thread that went to
// sleep while they were on their way (Wait) runs again; the stack
// thread's sem_post for them found no sleeper, so nothing is charged.
func (s *Socket) published(at time.Duration) {
	if s.ep != nil {
		s.ep.delivered(at, s)
		return
	}
	if w := s.waiter; w != nil {
		s.waiter = nil
		w(at)
	}
}

// The application thread's calls. m is the meter of the core the thread
// runs on; each call charges the meter its instance's SetAppMeter
// decorator makes of it.

// meter returns the meter the application's calls through m charge.
func (s *Socket) meter(m hw.Meter) hw.Meter { return s.b.in.app(m) }

// call charges one socket call on the application's core: lstack's
// intercepted call (no kernel crossing).
func (s *Socket) call(m hw.Meter) { m.Charge(CostSocketCall, 1) }

// copyCharge charges copying n bytes between the application's buffer
// and the ring.
func (s *Socket) copyCharge(m hw.Meter, n int) {
	if n > 0 {
		m.Charge(hw.CostCopyByte, int64(n))
	}
}

// Read copies received bytes into p. Nothing received yet is (0, nil), a
// non-blocking read's EAGAIN (Wait then sleeps); the end of the stream is
// io.EOF; a failed connection is tcp.ErrClosed, with its cause.
func (s *Socket) Read(m hw.Meter, p []byte) (int, error) {
	s.noteCaller(m)
	m = s.meter(m)
	s.call(m)
	s.stats.Reads++
	s.app = m
	s.p.Rx().Sync(m.Now())
	n, err := s.p.Read(p)
	s.app = nil
	if n > 0 {
		m.Charge(CostRingOp, 1) // the dequeue
		s.copyCharge(m, n)
		return n, nil
	}
	switch {
	case err == nil || errors.Is(err, sockring.ErrWouldBlock):
		s.stats.WouldBlock++
		return 0, nil
	case errors.Is(err, io.EOF):
		return 0, io.EOF
	case errors.Is(err, sockring.ErrClosed):
		return 0, tcp.ErrClosed
	}
	return 0, fmt.Errorf("%w: %w", tcp.ErrClosed, err)
}

// Readable reports whether Read would return bytes, EOF or an error, or
// soon will (bytes on their way to the application's core): the
// application's own view, no call is charged.
func (s *Socket) Readable() bool { return s.p.Readable() }

// Write copies as much of p as the send ring takes for the stack thread
// and asks it to send, as a non-blocking send(2): a short count leaves
// the rest to the caller, and a full send ring is ErrRingFull.
func (s *Socket) Write(m hw.Meter, p []byte) (int, error) {
	s.noteCaller(m)
	m = s.meter(m)
	s.call(m)
	s.stats.Writes++
	n, err := s.p.Put(p, false)
	switch {
	case errors.Is(err, sockring.ErrWouldBlock):
		s.stats.SendRingFull++
		return 0, ErrRingFull
	case errors.Is(err, sockring.ErrClosed), errors.Is(err, sockring.ErrShutdown):
		return 0, tcp.ErrClosed
	case err != nil:
		return 0, fmt.Errorf("%w: %w", tcp.ErrClosed, err)
	case n == 0:
		return 0, nil
	}
	s.copyCharge(m, n)
	s.p.Tx().Flush(m.Now()) // handed off once copied
	m.Charge(CostRingOp, 1)
	s.b.post(m, s)
	return n, nil
}

// Wait puts the thread to sleep until the socket is readable, and
// reports whether it slept: false when it already is (the thread goes
// on). wake is called, on the stack thread or by the receive ring's
// hand-off, with the time the thread becomes runnable. The sleep is a
// futex wait (lstack's sem_timedwait).
func (s *Socket) Wait(m hw.Meter, wake func(at time.Duration)) bool {
	s.b.in.pay(m)
	m = s.meter(m)
	rx := s.p.Rx()
	rx.Sync(m.Now())
	if rx.Len() > 0 || (rx.InFlight() == 0 && (s.p.EOF() || s.p.Err() != nil)) {
		return false
	}
	m.Charge(hw.CostSyscall, 1)
	m.Charge(hw.CostSyscallFutex, 1)
	s.stats.Sleeps++
	// Bytes on their way wake it when their hand-off delivers them
	// (published); otherwise the stack thread's next delivery does.
	s.waiter = wake
	return true
}

// Close closes the socket once its queued bytes are sent (a RST instead
// of a FIN when received bytes were left unread, RFC 2525 section 2.17).
func (s *Socket) Close(m hw.Meter) {
	if s.p.Closed() {
		return
	}
	s.noteCaller(m)
	m = s.meter(m)
	s.call(m)
	s.waiter = nil
	s.app = m
	s.p.Close()
	s.app = nil
}
