package lstack

import (
	"errors"
	"fmt"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Dial is an outgoing connection an application thread off the stack's
// lcore asks a Bridge for.
type Dial struct {
	// LocalPort is the connection's local port (0: the stack chooses).
	// A binding that runs one instance per queue picks one whose
	// replies RSS steers to this instance's queue.
	LocalPort uint16
	// Remote is the peer's address.
	Remote tcp.Addr
	// NoDelay disables Nagle's algorithm (TCP_NODELAY), as hiredis does
	// for redis-benchmark's connections.
	NoDelay bool
}

// Connect is an application thread's connect(2) through the bridge
// (Gazelle's lstack_connect for a thread that is not a stack lcore,
// handed to the stack thread by an rpc call; on a kernel host a system
// call): the socket is the thread's at once, with its fd, reporting its
// readiness to ep; the stack thread opens the connection when the call
// reaches its core, and ep reports the socket ready once the handshake
// completes (Socket.Connected) or fails (a Read returns the error).
// Bytes written before then wait in the send ring, as a non-blocking
// connect's caller waits for writability before it writes; m is the
// thread's meter.
func (b *Bridge) Connect(m hw.Meter, d Dial, ep *Epoll) (*Socket, error) {
	if ep == nil {
		return nil, errors.New("lstack: Bridge.Connect needs the thread's epoll")
	}
	s := &Socket{b: b, ep: ep, dial: &d}
	b.initSocket(s)
	b.router.bind(s)
	b.stats.Connects++
	s.noteCaller(m)
	am := s.meter(m)
	s.call(am)
	b.post(am, s)
	return s, nil
}

// Connected reports whether the socket's connection is established: the
// stack thread saw its handshake complete (always true for an accepted
// socket). The application's own view; no call is charged.
func (s *Socket) Connected() bool { return s.dial == nil || s.dialed }

// dialNow opens a dialing socket's connection on the stack thread: the
// call reached its core. A connection the stack refuses (no port, the
// connection limit) fails the socket.
func (b *Bridge) dialNow(m hw.Meter, s *Socket) {
	d := s.dial
	// connect(2) sends the SYN in the caller's context (tcp_v4_connect
	// -> tcp_connect), so on a kernel host its transmit is the caller's.
	b.in.callerSends(s)
	c, err := b.in.Connect(m, d.LocalPort, d.Remote)
	b.in.callerSent()
	if err != nil {
		b.stats.Errors++
		s.failed = true
		s.p.Fail(fmt.Errorf("lstack: connect to %v: %w", d.Remote, err))
		return
	}
	if d.NoDelay {
		c.SetNoDelay(true)
	}
	s.p.Attach(c, false)
	b.socks[c] = s
	b.set.Add(c, nil)
}

// checkDialed reports a dialing socket's completed handshake to its
// epoll, once.
func (b *Bridge) checkDialed(m hw.Meter, s *Socket) {
	if s.dial == nil || s.dialed || s.p.Conn() == nil || !s.p.Conn().Connected() {
		return
	}
	s.dialed = true
	s.ep.mark(s)
	s.ep.wakeThread(m)
}
