package rtc

import (
	"errors"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Errors of the connection calls, besides the engine's (tcp.ErrConnReset,
// tcp.ErrTimeout, tcp.ErrConnRefused, io.EOF from Read).
var (
	// ErrWouldBlock: nothing to read yet, or no room in the send buffer;
	// Readable or Writable follows when there is. It is the engine's
	// tcp.ErrWouldBlock.
	ErrWouldBlock = tcp.ErrWouldBlock
	// ErrClosed: the application closed the connection already.
	ErrClosed = errors.New("rtc: connection closed")
	// ErrInReceive: a call that would re-enter the stack (Write,
	// CloseWrite, Close, Abort, Read) made from Receiver.Receive, which
	// runs inside the processing of a segment.
	ErrInReceive = errors.New("rtc: stack call from inside Receive")
	// ErrNilHandler: Dial or an accept function gave no handler.
	ErrNilHandler = errors.New("rtc: nil handler")
)

// Handler is an application's side of one connection. Its methods are
// called on the connection's lcore, between polls of the stack, and may
// call every method of the Conn; they must not block, since the stack
// is not polled while they run.
type Handler interface {
	// Readable: bytes, the end of the stream (Read returns io.EOF) or an
	// error can be read. It is level-like, as EPOLLIN: it may come again
	// with nothing new (Read then returns ErrWouldBlock, or io.EOF again).
	Readable(c *Conn)
	// Writable: the send buffer has room again after a Write that fell
	// short (or returned ErrWouldBlock). A connection that never filled
	// its send buffer gets none.
	Writable(c *Conn)
	// Closed: the connection ended while the application still held it:
	// err is the engine's error after a reset, a timeout or a lost
	// lcore (rt.ErrStopped), nil after an orderly end (our FIN and the
	// peer's both acknowledged, from LAST-ACK). No callback follows.
	// After Close, Closed is not called.
	Closed(c *Conn, err error)
}

// Receiver is an optional part of a Handler: Receive takes in-order
// bytes straight from the segment that carries them, while TCP's
// receive buffer is empty (tcp.Conn.SetDirectReceiver), sparing their
// copy into and out of that buffer. It returns how many of p it took
// (copied out or used in place: p is valid during the call only); the
// rest goes to TCP's receive buffer, read with Read on the Readable that
// follows, and later bytes join it there until it is drained. Readable
// follows every Receive. Receive runs inside segment processing: it must
// not call the Conn (those calls fail with ErrInReceive).
type Receiver interface {
	Receive(c *Conn, p []byte) int
}

// Conn is one TCP connection served to completion on its lcore.
type Conn struct {
	lc *rt.Lcore
	tc *tcp.Conn
	h  Handler
	rx Receiver
	// dialed receives a dial's outcome, nil once reported (and for an
	// accepted connection).
	dialed func(*Conn, error)
	// wantWrite: a Write fell short, so Writable is owed when room
	// comes back.
	wantWrite bool
	// closed: the application closed it; gone: Closed was reported (or
	// a dial failed). Either way no callback follows.
	closed, gone bool
	inRecv       bool
	la, ra       tcp.Addr
	// data is the application's, for its own use.
	data any
}

// newConn binds tc to h on lc: it watches tc's events and, when h takes
// bytes straight from segments, sets the direct receiver (lcore only).
func newConn(lc *rt.Lcore, tc *tcp.Conn, h Handler) *Conn {
	c := &Conn{lc: lc, tc: tc, h: h, la: tc.LocalAddr(), ra: tc.RemoteAddr()}
	// A run-to-completion application writes whole messages when it has
	// them; Nagle would hold a reply back for the peer's ACK, as the
	// net package's TCP_NODELAY default avoids.
	tc.SetNoDelay(true)
	c.setHandler(h)
	lc.Watch(tc, c)
	return c
}

// setHandler installs h, with the direct receiver when h has Receive.
func (c *Conn) setHandler(h Handler) {
	c.h = h
	c.rx, _ = h.(Receiver)
	if c.rx != nil {
		c.tc.SetDirectReceiver(c.receive)
	} else {
		c.tc.SetDirectReceiver(nil)
	}
}

// receive is the direct receiver: it hands p to the application.
func (c *Conn) receive(p []byte) int {
	if c.closed || c.gone {
		return 0
	}
	c.inRecv = true
	n := c.rx.Receive(c, p)
	c.inRecv = false
	return max(0, min(n, len(p)))
}

// Lcore returns the lcore that serves the connection.
func (c *Conn) Lcore() *rt.Lcore { return c.lc }

// LocalAddr returns the connection's local endpoint.
func (c *Conn) LocalAddr() tcp.Addr { return c.la }

// RemoteAddr returns the peer's endpoint.
func (c *Conn) RemoteAddr() tcp.Addr { return c.ra }

// TCP returns the engine's connection, for its state and Info (lcore
// only). Reading and writing through it directly bypasses Writable's
// bookkeeping.
func (c *Conn) TCP() *tcp.Conn { return c.tc }

// SetData keeps a value of the application's with the connection.
func (c *Conn) SetData(v any) { c.data = v }

// Data returns the value SetData kept.
func (c *Conn) Data() any { return c.data }

// SetHandler replaces the connection's handler (an accepted connection
// that changes protocol, say). Not from Receive.
func (c *Conn) SetHandler(h Handler) error {
	if c.inRecv {
		return ErrInReceive
	}
	if h == nil {
		return ErrNilHandler
	}
	c.setHandler(h)
	return nil
}

// Read copies bytes from TCP's receive buffer into p: those Receive did
// not take, or all of them for a handler without Receive. It returns
// ErrWouldBlock when there are none yet, io.EOF after the peer's FIN,
// and the connection's error after a reset or timeout.
func (c *Conn) Read(p []byte) (int, error) {
	if err := c.usable(); err != nil {
		return 0, err
	}
	return c.tc.Read(p)
}

// Buffered returns the bytes waiting in TCP's receive buffer for Read.
func (c *Conn) Buffered() int { return c.tc.RecvBuffered() }

// Write copies as much of p as fits into TCP's send buffer and returns
// the count; ErrWouldBlock when nothing fits. After a short count
// Writable follows once acknowledged bytes make room. The bytes go out
// in the lcore's next poll.
func (c *Conn) Write(p []byte) (int, error) {
	if err := c.usable(); err != nil {
		return 0, err
	}
	n, err := c.tc.Write(p)
	if n < len(p) && (err == nil || errors.Is(err, tcp.ErrWouldBlock)) {
		c.wantWrite = true
	}
	return n, err
}

// CloseWrite sends a FIN after the bytes written (shutdown(2) with
// SHUT_WR); reading goes on.
func (c *Conn) CloseWrite() error {
	if err := c.usable(); err != nil {
		return err
	}
	return c.tc.CloseWrite()
}

// Close ends the application's use of the connection: bytes written are
// still sent, then a FIN, as close(2) does (unread bytes make it a
// reset, as Linux does). No callback follows.
func (c *Conn) Close() error {
	if err := c.usable(); err != nil {
		return err
	}
	c.closed = true
	c.release()
	return c.tc.Close()
}

// Abort resets the connection (RST) and ends the application's use of
// it. No callback follows.
func (c *Conn) Abort() error {
	if err := c.usable(); err != nil {
		return err
	}
	c.closed = true
	c.release()
	c.tc.Abort()
	return nil
}

// usable says why the application may not call the connection now.
func (c *Conn) usable() error {
	switch {
	case c.inRecv:
		return ErrInReceive
	case c.closed:
		return ErrClosed
	}
	return nil
}

// ConnEvent implements rt.ConnHandler: a dial's outcome first, then
// Readable, Writable and Closed as the conditions say.
func (c *Conn) ConnEvent(lc *rt.Lcore, m tcp.EventMask) {
	if c.closed || c.gone {
		return
	}
	tc := c.tc
	if c.dialed != nil {
		if err := tc.Err(); err != nil || tc.State() == tcp.StateClosed {
			if err == nil {
				err = tcp.ErrClosed
			}
			c.fail(err)
			return
		}
		if !tc.Connected() {
			return
		}
		d := c.dialed
		c.dialed = nil
		d(c, nil)
		if c.closed {
			return
		}
	}
	if m&(tcp.EventReadable|tcp.EventHangup) != 0 && (tc.RecvBuffered() > 0 || tc.Err() == nil) {
		c.h.Readable(c)
		if c.closed {
			return
		}
	}
	if c.wantWrite && tc.Writable() {
		c.wantWrite = false
		c.h.Writable(c)
		if c.closed {
			return
		}
	}
	if tc.State() == tcp.StateClosed {
		c.end(tc.Err())
	}
}

// fail reports a failed dial and forgets the connection.
func (c *Conn) fail(err error) {
	d := c.dialed
	c.dialed = nil
	c.gone = true
	c.release()
	d(c, err)
}

// release stops the lcore's callbacks for the connection: its readiness
// and its in-order bytes.
func (c *Conn) release() {
	c.lc.Unwatch(c.tc)
	c.tc.SetDirectReceiver(nil)
}

// end reports the connection's end and forgets it.
func (c *Conn) end(err error) {
	c.gone = true
	c.release()
	c.h.Closed(c, err)
}

// LcoreStopped implements rt.ConnHandler: the lcore stopped with the
// connection still open.
func (c *Conn) LcoreStopped() {
	if c.closed || c.gone {
		return
	}
	if c.dialed != nil {
		c.fail(rt.ErrStopped)
		return
	}
	c.end(rt.ErrStopped)
}

var _ rt.ConnHandler = (*Conn)(nil)
