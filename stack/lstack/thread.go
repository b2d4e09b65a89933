package lstack

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/internal/spsc"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Gazelle's asymmetric model: application threads that are not the stack's
// lcore (MySQL's thread per connection) use sockets owned by stack
// threads. A routing table (Router) maps the application's fd to the
// Socket, and through it to the Bridge of the instance that owns the
// connection; the two sides meet on lock-free single-producer
// single-consumer rings, one per direction per socket (Gazelle's
// sock->send_ring and sock->recv_ring, rte_ring with RING_F_SP_ENQ |
// RING_F_SC_DEQ). The stack thread does all protocol work; an application
// thread only copies bytes into and out of the rings, asks the stack
// thread to send (Gazelle's rpc_call_send), and sleeps on a semaphore
// when it has nothing to read (lstack's sem_timedwait, woken with
// sem_post, a futex on both ends).
//
// ModeKernel runs the same path for the kernel's costs: a socket call is
// a system call on the application's core, the copy is copy_to/from_user,
// the protocol work is the kernel's on the stack (interrupt) core, and a
// sleeping reader is woken by the softirq with try_to_wake_up. There is no
// ring in the kernel; the rings then only carry the bytes between the two
// simulated cores and are not charged.

// ringSlots is the depth of each socket's send and receive ring, in
// messages (Gazelle's default send_ring_size / recv_ring_size order of
// magnitude is a few hundred pbufs; messages here are whole writes).
const ringSlots = 256

// ErrRingFull is returned by Socket.Write when the socket's send ring has
// no free slot: the stack thread is behind. The caller waits and retries,
// as a non-blocking send's EAGAIN.
var ErrRingFull = errors.New("lstack: send ring full")

// BridgeStats are a bridge's counters: the stack thread's side of the
// asymmetric model.
type BridgeStats struct {
	// Accepted counts connections accepted for application threads.
	Accepted uint64 `json:"accepted"`
	// SendRequests counts send requests dequeued from application
	// threads (Gazelle's rpc_call_send); SendBytes the bytes written to
	// TCP for them.
	SendRequests uint64 `json:"send_requests"`
	SendBytes    uint64 `json:"send_bytes"`
	// RecvBytes counts bytes moved from TCP to sockets' receive rings;
	// RecvRingFull counts times a receive ring had no slot, leaving data
	// in TCP until the application reads (back-pressure, not a loss).
	RecvBytes    uint64 `json:"recv_bytes"`
	RecvRingFull uint64 `json:"recv_ring_full"`
	// Wakeups counts sleeping application threads woken.
	Wakeups uint64 `json:"wakeups"`
	// SendBlocked counts send requests that TCP's send buffer could not
	// take whole; the rest is sent on tcp.EventWritable.
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

// message is one write's bytes in a ring, stamped with the time its
// producer put it there: a simulated core's turn runs at one instant of
// the engine while its clock advances with what it charges, so the
// consumer on another core must not see the bytes before that time.
type message struct {
	b  []byte
	at time.Duration
}

// msgRing is one direction of a socket: an SPSC ring of messages and the
// consumer's look at the oldest one (rte_ring has no peek; the consumer
// holds what it dequeued until it is due).
type msgRing struct {
	r    *spsc.Ring[message]
	held message
	has  bool
	one  [1]message
}

func newMsgRing() msgRing {
	r, _ := spsc.New[message](ringSlots) // ringSlots is a power of two
	return msgRing{r: r}
}

// put enqueues b at time at (producer side); false when full.
func (q *msgRing) put(b []byte, at time.Duration) bool {
	return q.r.Enqueue(message{b: b, at: at})
}

// peek returns the oldest message if it is due by now (consumer side),
// and whether a ring operation was spent dequeuing it.
func (q *msgRing) peek(now time.Duration) (*message, bool, bool) {
	deq := false
	if !q.has {
		if q.r.DequeueBurst(q.one[:]) == 0 {
			return nil, false, false
		}
		q.held, q.one[0], q.has, deq = q.one[0], message{}, true, true
	}
	if q.held.at > now {
		return nil, deq, false
	}
	return &q.held, deq, true
}

// drop releases the held message once consumed.
func (q *msgRing) drop() { q.held, q.has = message{}, false }

// count returns the messages in the ring, the held one included.
func (q *msgRing) count() int {
	n := q.r.Count()
	if q.has {
		n++
	}
	return n
}

// full reports whether the producer would be refused.
func (q *msgRing) full() bool { return q.r.Count() >= q.r.Cap() }

// nextDue returns the held message's time, or NoDeadline.
func (q *msgRing) nextDue() time.Duration {
	if q.has {
		return q.held.at
	}
	return hw.NoDeadline
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
// bytes cross rings to and from the stack thread that owns it.
type Socket struct {
	b    *Bridge
	c    *tcp.Conn
	fd   int
	send msgRing // application -> stack
	recv msgRing // stack -> application
	// head is the unread rest of the receive message the application
	// dequeued last.
	head []byte
	// pending says the socket is on the bridge's send request list.
	pending bool
	// unsent is what TCP's send buffer did not take yet (stack side).
	unsent []byte
	// rxStalled says the stack left data in TCP because the receive
	// ring was full; the application's next dequeue calls it back.
	rxStalled bool
	eof, err  bool
	closed    bool
	// waiter wakes the application thread sleeping on the socket.
	waiter func(at time.Duration)
	stats  SocketStats
}

// FD returns the socket's fd in its router.
func (s *Socket) FD() int { return s.fd }

// Conn returns the TCP connection (the stack thread's object; an
// application thread must not call it).
func (s *Socket) Conn() *tcp.Conn { return s.c }

// Stats returns the application side's counters.
func (s *Socket) Stats() SocketStats { return s.stats }

// Bridge is the stack thread's end of the asymmetric model for one
// instance: a poller that runs on the instance's lcore after the instance
// itself, accepts connections for the application, serves the sockets'
// send requests, moves received bytes into their receive rings and wakes
// the threads that sleep on them. It is the only consumer of the
// instance's TCP readiness events.
type Bridge struct {
	in     *Instance
	router *Router
	bell   func(at time.Duration)
	ln     *tcp.Listener
	socks  map[*tcp.Conn]*Socket
	// requests are the sockets with something to send, in the order
	// their threads asked, each with the time it was asked. In Gazelle
	// this is the stack's lock-free rpc queue; in virtual time one list
	// serves, and each request is charged a ring operation at both ends.
	requests []request
	onAccept func(fd int, s *Socket)
	events   []tcp.Event
	stats    BridgeStats
}

// request is a socket's call to the stack thread.
type request struct {
	s  *Socket
	at time.Duration
}

// NewBridge returns the bridge of in. router is the process's fd table;
// doorbell wakes the instance's lcore at a time (in virtual time, the
// core's Wake): an application thread rings it when it posts a request.
func NewBridge(in *Instance, router *Router, doorbell func(at time.Duration)) (*Bridge, error) {
	if in == nil || router == nil || doorbell == nil {
		return nil, errors.New("lstack: NewBridge needs an instance, a router and a doorbell")
	}
	return &Bridge{in: in, router: router, bell: doorbell, socks: map[*tcp.Conn]*Socket{}}, nil
}

// Listen listens on port of the instance's address (Gazelle's
// listen_shadow: every instance of a host listens), handing each
// accepted connection to onAccept with its new fd, on the stack thread.
func (b *Bridge) Listen(port uint16, backlog int, onAccept func(fd int, s *Socket)) error {
	ln, err := b.in.Listen(port, backlog)
	if err != nil {
		return fmt.Errorf("lstack: bridge listen on port %d: %w", port, err)
	}
	b.ln, b.onAccept = ln, onAccept
	return nil
}

// Instance returns the instance the bridge serves.
func (b *Bridge) Instance() *Instance { return b.in }

// Stats returns the bridge's counters.
func (b *Bridge) Stats() BridgeStats { return b.stats }

// ResetStats zeroes the counters.
func (b *Bridge) ResetStats() { b.stats = BridgeStats{} }

// Open returns the number of open sockets.
func (b *Bridge) Open() int { return len(b.socks) }

// Poll runs one turn of the stack thread's side: send requests first
// (their bytes then leave in the instance's next turn), then readiness.
// It returns the time of the next request not yet due.
func (b *Bridge) Poll(m hw.Meter) (bool, time.Duration) {
	worked, next := b.serveRequests(m)
	b.events = b.in.TCP().Events(b.events[:0])
	for _, ev := range b.events {
		worked = true
		switch {
		case ev.Listener != nil && ev.Listener == b.ln:
			b.accept(m)
		case ev.Conn != nil:
			if s := b.socks[ev.Conn]; s != nil {
				b.ready(m, s, ev.Mask)
			}
		}
	}
	return worked, next
}

// accept takes every pending connection and binds it to an fd.
func (b *Bridge) accept(m hw.Meter) {
	for {
		c, ok := b.ln.Accept()
		if !ok {
			return
		}
		b.chargeStack(m, 1)
		s := &Socket{b: b, c: c, send: newMsgRing(), recv: newMsgRing()}
		b.socks[c] = s
		fd := b.router.bind(s)
		b.stats.Accepted++
		if b.onAccept != nil {
			b.onAccept(fd, s)
		}
	}
}

// serveRequests dequeues the send requests that are due and hands their
// bytes to TCP; it returns whether it served any, and when the first one
// left waiting is due.
func (b *Bridge) serveRequests(m hw.Meter) (bool, time.Duration) {
	if len(b.requests) == 0 {
		return false, hw.NoDeadline
	}
	now := m.Now()
	worked, next := false, hw.NoDeadline
	keep := b.requests[:0]
	for _, r := range b.requests {
		if r.at > now {
			keep = append(keep, r)
			next = min(next, r.at)
			continue
		}
		worked = true
		s := r.s
		s.pending = false
		b.chargeRing(m, 1) // the request's dequeue
		b.stats.SendRequests++
		b.chargeStack(m, 1)
		if s.rxStalled {
			s.rxStalled = false
			b.moveReceived(m, s)
		}
		b.drainSend(m, s)
		if s.closed {
			b.finish(m, s)
		}
	}
	clear(b.requests[len(keep):])
	b.requests = keep
	return worked, next
}

// drainSend writes the socket's due messages to TCP until its send
// buffer is full.
func (b *Bridge) drainSend(m hw.Meter, s *Socket) {
	now := m.Now()
	for {
		if len(s.unsent) == 0 {
			msg, deq, ok := s.send.peek(now)
			if deq {
				b.chargeRing(m, 1)
			}
			if !ok {
				return
			}
			s.unsent = msg.b
			s.send.drop()
		}
		n, err := s.c.Write(s.unsent)
		b.stats.SendBytes += uint64(n)
		s.unsent = s.unsent[n:]
		if err != nil && !errors.Is(err, tcp.ErrWouldBlock) {
			s.unsent = nil
			s.err = true
			b.wake(m, s)
			return
		}
		if len(s.unsent) > 0 {
			b.stats.SendBlocked++
			return // the rest on tcp.EventWritable
		}
	}
}

// ready handles a connection's readiness.
func (b *Bridge) ready(m hw.Meter, s *Socket, mask tcp.EventMask) {
	if mask&tcp.EventWritable != 0 {
		b.drainSend(m, s)
		if s.closed {
			b.finish(m, s)
			return
		}
	}
	if mask&(tcp.EventReadable|tcp.EventHangup|tcp.EventError) != 0 {
		b.moveReceived(m, s)
	}
	if mask&tcp.EventError != 0 && !s.err {
		s.err = true
		b.stats.Errors++
		b.wake(m, s)
	}
}

// moveReceived moves what TCP holds into the socket's receive ring and
// wakes a sleeping reader.
func (b *Bridge) moveReceived(m hw.Meter, s *Socket) {
	moved := false
	for !s.eof && !s.err {
		if s.recv.full() {
			s.rxStalled = true
			b.stats.RecvRingFull++
			break
		}
		n := s.c.RecvBuffered()
		if n == 0 {
			if _, err := s.c.Read(nil); err != nil && !errors.Is(err, tcp.ErrWouldBlock) {
				if errors.Is(err, io.EOF) {
					s.eof = true
				} else {
					s.err = true
				}
				moved = true
			}
			break
		}
		buf := make([]byte, n)
		n, err := s.c.Read(buf)
		if n > 0 {
			s.recv.put(buf[:n], m.Now())
			b.chargeRing(m, 1)
			b.stats.RecvBytes += uint64(n)
			moved = true
		}
		if err != nil && !errors.Is(err, tcp.ErrWouldBlock) {
			s.err = true
			break
		}
	}
	if moved {
		b.wake(m, s)
	}
}

// wake wakes the thread sleeping on s, if one is: in lstack a sem_post
// that finds a waiter is a futex wake system call; in the kernel the
// softirq wakes the reader directly. Either way the scheduler's
// try_to_wake_up runs (and an IPI reaches the thread's core).
func (b *Bridge) wake(m hw.Meter, s *Socket) {
	w := s.waiter
	if w == nil {
		return
	}
	s.waiter = nil
	if b.in.mode == ModeLstack {
		m.Charge(hw.CostSyscall, 1)
		m.Charge(hw.CostSyscallFutex, 1)
	}
	m.Charge(hw.CostWakeup, 1)
	b.stats.Wakeups++
	w(m.Now())
}

// finish closes a socket its application closed, once its bytes are in
// TCP.
func (b *Bridge) finish(m hw.Meter, s *Socket) {
	if len(s.unsent) > 0 || s.send.count() > 0 {
		return
	}
	_ = s.c.Close()
	delete(b.socks, s.c)
	delete(b.router.fds, s.fd)
	b.stats.Closed++
}

// chargeStack charges the stack thread's handling of one request (lstack
// only: in the kernel the system call's work is the protocol's).
func (b *Bridge) chargeStack(m hw.Meter, n int64) {
	if b.in.mode == ModeLstack {
		m.Charge(hw.CostStackSocketCall, n)
	}
}

// chargeRing charges ring operations (lstack only).
func (b *Bridge) chargeRing(m hw.Meter, n int64) {
	if b.in.mode == ModeLstack {
		m.Charge(hw.CostRingOp, n)
	}
}

// post queues the socket's send request and rings the stack thread.
func (b *Bridge) post(m hw.Meter, s *Socket) {
	if s.pending {
		return
	}
	s.pending = true
	b.requests = append(b.requests, request{s: s, at: m.Now()})
	if b.in.mode == ModeLstack {
		m.Charge(hw.CostRingOp, 1) // the request's enqueue
	}
	b.bell(m.Now())
}

// The application thread's calls. m is the meter of the core the thread
// runs on.

// call charges one socket call on the application's core: lstack's
// intercepted call (no kernel crossing) or a system call.
func (s *Socket) call(m hw.Meter) {
	if s.b.in.mode == ModeKernel {
		m.Charge(hw.CostSyscall, 1)
		return
	}
	m.Charge(hw.CostStackSocketCall, 1)
}

// copyCharge charges copying n bytes between the application's buffer
// and the ring (lstack) or the kernel (copy_to/from_user).
func (s *Socket) copyCharge(m hw.Meter, n int) {
	if n <= 0 {
		return
	}
	if s.b.in.mode == ModeKernel {
		m.Charge(hw.CostKernelCopyByte, int64(n))
		return
	}
	m.Charge(hw.CostCopyByte, int64(n))
}

// Read copies received bytes into p. Nothing received yet is (0, nil), a
// non-blocking read's EAGAIN (Wait then sleeps); the end of the stream is
// io.EOF; a failed connection is tcp.ErrClosed.
func (s *Socket) Read(m hw.Meter, p []byte) (int, error) {
	s.call(m)
	s.stats.Reads++
	now := m.Now()
	n := 0
	for n < len(p) {
		if len(s.head) == 0 {
			msg, deq, ok := s.recv.peek(now)
			if deq && s.b.in.mode == ModeLstack {
				m.Charge(hw.CostRingOp, 1)
			}
			if !ok {
				break
			}
			s.head = msg.b
			s.recv.drop()
		}
		c := copy(p[n:], s.head)
		s.head = s.head[c:]
		n += c
	}
	s.copyCharge(m, n)
	if s.rxStalled {
		s.b.post(m, s) // the stack thread refills the ring
	}
	switch {
	case n > 0:
		return n, nil
	case s.recv.count() > 0:
		// Bytes are on their way but not due yet: EAGAIN.
	case s.err:
		return 0, tcp.ErrClosed
	case s.eof:
		return 0, io.EOF
	}
	s.stats.WouldBlock++
	return 0, nil
}

// Readable reports whether Read would return bytes, EOF or an error, or
// soon will (bytes in the ring not due yet): the application's own view,
// no call is charged.
func (s *Socket) Readable() bool {
	return len(s.head) > 0 || s.recv.count() > 0 || s.eof || s.err
}

// ReadableAt returns when the oldest received bytes are due (NoDeadline
// when none are held back).
func (s *Socket) ReadableAt() time.Duration { return s.recv.nextDue() }

// Write queues a copy of p for the stack thread and asks it to send. It
// takes all of p or nothing: a full send ring is ErrRingFull.
func (s *Socket) Write(m hw.Meter, p []byte) (int, error) {
	s.call(m)
	s.stats.Writes++
	switch {
	case s.closed:
		return 0, tcp.ErrClosed
	case s.err:
		return 0, tcp.ErrClosed
	case len(p) == 0:
		return 0, nil
	}
	buf := append([]byte(nil), p...)
	s.copyCharge(m, len(p))
	if !s.send.put(buf, m.Now()) {
		s.stats.SendRingFull++
		return 0, ErrRingFull
	}
	if s.b.in.mode == ModeLstack {
		m.Charge(hw.CostRingOp, 1)
	}
	s.b.post(m, s)
	return len(p), nil
}

// Wait puts the thread to sleep until the socket is readable, and
// reports whether it slept: false when it already is (the thread goes
// on). wake is called, on the stack thread, with the time the thread
// becomes runnable. In lstack the sleep is a futex wait (sem_timedwait);
// in the kernel, poll(2) on the socket.
func (s *Socket) Wait(m hw.Meter, wake func(at time.Duration)) bool {
	if len(s.head) > 0 || s.eof || s.err {
		return false
	}
	due := hw.NoDeadline
	if s.recv.count() > 0 {
		msg, deq, ok := s.recv.peek(m.Now())
		if deq && s.b.in.mode == ModeLstack {
			m.Charge(hw.CostRingOp, 1)
		}
		if ok {
			return false
		}
		if msg == nil {
			due = s.recv.nextDue()
		}
	}
	m.Charge(hw.CostSyscall, 1)
	if s.b.in.mode == ModeLstack {
		m.Charge(hw.CostSyscallFutex, 1)
	}
	s.stats.Sleeps++
	if due != hw.NoDeadline {
		// The stack thread posted bytes that arrive later in this
		// thread's time: it sleeps until then.
		wake(due)
		return true
	}
	s.waiter = wake
	return true
}

// Close closes the socket once its queued bytes are sent.
func (s *Socket) Close(m hw.Meter) {
	if s.closed {
		return
	}
	s.call(m)
	s.closed = true
	s.waiter = nil
	s.b.post(m, s)
}
