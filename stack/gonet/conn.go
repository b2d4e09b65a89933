package gonet

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/sockring"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Options size a connection's rings.
type Options struct {
	// RxRing and TxRing are the receive and send ring sizes in bytes, a
	// power of two (default 64 KiB each). They sit in front of TCP's own
	// buffers, as Gazelle's per-socket rings sit in front of lwIP's.
	RxRing int `yaml:"rx_ring"`
	TxRing int `yaml:"tx_ring"`
	// Latency, when set, records every connection's read latency (see
	// ReadLatency); nil records nothing and costs nothing.
	Latency *ReadLatency `yaml:"-"`
}

// DefaultRing is the default ring size.
const DefaultRing = 64 << 10

func (o Options) withDefaults() Options {
	if o.RxRing == 0 {
		o.RxRing = DefaultRing
	}
	if o.TxRing == 0 {
		o.TxRing = DefaultRing
	}
	return o
}

// Validate names the first bad key.
func (o Options) Validate() error {
	for _, r := range []struct {
		key string
		v   int
	}{{"rx_ring", o.RxRing}, {"tx_ring", o.TxRing}} {
		if r.v != 0 && (r.v < 1024 || r.v > 1<<26 || r.v&(r.v-1) != 0) {
			return errors.New(r.key + ": not a power of two in 1024..64Mi")
		}
	}
	return nil
}

// Conn is a TCP connection on Savanna's stack. It implements net.Conn
// and, like *net.TCPConn, CloseWrite. Its bytes cross a sockring.Pipe
// (the bridge stack/lstack's sockets use too); Conn is the real-time
// driver's policy: an rt.Task kicks the lcore, channels and deadlines
// wake a blocked Read or Write, and the hand-offs are immediate.
type Conn struct {
	lc   *rt.Lcore
	task *rt.Task
	// la and ra are the addresses, kept as values and made into
	// *net.TCPAddr only when asked for (two allocations less per
	// connection); a zero port means not known yet.
	la, ra tcp.Addr

	p sockring.Pipe
	// lat records read latency (nil: off); rxAt is the lcore clock
	// (nanoseconds) when bytes last went into an empty receive ring,
	// 0 before any.
	lat  *ReadLatency
	rxAt atomic.Int64
	// rdSig and wrSig wake a blocked Read or Write: readiness, an
	// expired deadline and Close all signal them (one channel each, so a
	// blocked call parks on one channel only). Each is made the first
	// time its side blocks or sets a deadline: a connection whose writes
	// never wait for room (nearly all) never makes wrSig.
	rdSig, wrSig lazySig
	// rdDl and wrDl are made when a deadline is first set.
	rdDl, wrDl atomic.Pointer[deadline]
	rdMu, wrMu sync.Mutex

	// Lcore only.
	dialRes chan error
}

func newConn(lc *rt.Lcore, o Options) *Conn {
	o = o.withDefaults()
	c := &Conn{lc: lc, lat: o.Latency}
	// The rings borrow their storage from the lcore's free list, and
	// the lcore's sweep takes it back while they are drained
	// (ReleaseIdle), so that an idle connection holds none.
	c.p.Init(sockring.Config{RxRing: o.RxRing, TxRing: o.TxRing, Storage: lc.RingStorage()}, (*driver)(c))
	c.task = rt.NewTask(c.service)
	return c
}

// driver is the connection as its pipe's sockring.Driver.
type driver Conn

// Kick implements sockring.Driver: the lcore runs the connection's task.
func (d *driver) Kick() { d.lc.Kick(d.task) }

// Readable implements sockring.Driver.
func (d *driver) Readable() { d.rdSig.signal() }

// Writable implements sockring.Driver.
func (d *driver) Writable() { d.wrSig.signal() }

// RxStamp implements sockring.RxStamper: the start of the wait
// ReadLatency measures (lcore only).
func (d *driver) RxStamp() {
	if d.lat != nil {
		d.rxAt.Store(max(int64(d.lc.Now()), 1))
	}
}

// attach binds the engine's connection (lcore only). Nagle is off, as the
// net package sets TCP_NODELAY on every TCP connection; arriving bytes go
// straight into the receive ring.
func (c *Conn) attach(lc *rt.Lcore, tc *tcp.Conn) {
	c.la, c.ra = tc.LocalAddr(), tc.RemoteAddr()
	tc.SetNoDelay(true)
	c.p.Attach(tc, true)
	lc.Watch(tc, c)
}

// RingBytes returns the bytes waiting in the connection's receive ring
// (for the application to read) and send ring (for the lcore to move
// into TCP): the part of its queues TCP does not see. It implements
// rt.RingReporter for socket listings; safe from any goroutine.
func (c *Conn) RingBytes() (rx, tx int) { return c.p.Rx().Len(), c.p.Tx().Len() }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// lazySig is a wake-up channel made on first use. A waiter loads it
// (now) before it looks at its condition, and when it finds nothing:
// with a channel then, it blocks on that channel, which any signaller
// that changed the condition after the look has seen (the look and the
// signaller's load of the channel are ordered by sequentially
// consistent atomics, and the channel keeps one signal); with none
// then, it makes the channel and looks again instead of blocking (wait),
// since a signaller before the channel existed found nothing to signal.
// The decision must rest on the channel as it was before the look:
// another goroutine may make it in between (SetDeadline does), and a
// waiter that asked after the look whether it had made the channel
// itself blocked on one that the signaller had never seen.
type lazySig struct{ p atomic.Pointer[sigChan] }

type sigChan struct{ ch chan struct{} }

// now returns the channel, nil before it is made.
func (l *lazySig) now() chan struct{} {
	if s := l.p.Load(); s != nil {
		return s.ch
	}
	return nil
}

// get returns the channel, making it if need be.
func (l *lazySig) get() chan struct{} {
	if s := l.p.Load(); s != nil {
		return s.ch
	}
	l.p.CompareAndSwap(nil, &sigChan{ch: make(chan struct{}, 1)})
	return l.p.Load().ch
}

// wait blocks until a signal on seen, the channel now returned before
// the look that found nothing; when there was none, it makes the channel
// and returns at once, so that the waiter looks again.
func (l *lazySig) wait(seen chan struct{}) {
	if seen == nil {
		l.get()
		return
	}
	<-seen
}

// signal wakes a waiter, if there has ever been one.
func (l *lazySig) signal() {
	if s := l.p.Load(); s != nil {
		signal(s.ch)
	}
}

// ConnEvent implements rt.ConnHandler.
func (c *Conn) ConnEvent(lc *rt.Lcore, _ tcp.EventMask) { c.service(lc) }

// ReleaseIdle implements rt.IdleReleaser: drained rings give their
// storage back to the lcore's free list (lcore only).
func (c *Conn) ReleaseIdle() { c.p.ReleaseIdle() }

// LcoreStopped implements rt.ConnHandler.
func (c *Conn) LcoreStopped() {
	c.p.Fail(rt.ErrStopped)
	if c.dialRes != nil {
		c.dialRes <- rt.ErrStopped
		c.dialRes = nil
	}
}

// service reports a dial's outcome, then lets the pipe move bytes and
// carry out half-close and close (lcore only). It runs on every
// readiness event and every kick from the application.
func (c *Conn) service(lc *rt.Lcore) {
	tc := c.p.Conn()
	if c.p.Gone() || tc == nil {
		return
	}
	if c.dialRes != nil {
		if err := tc.Err(); err != nil {
			c.dialRes <- err
			c.dialRes = nil
			c.finish(lc)
			return
		}
		if c.p.Closed() {
			c.dialRes <- net.ErrClosed
			c.dialRes = nil
			c.finish(lc)
			return
		}
		if !tc.Connected() {
			return
		}
		c.dialRes <- nil
		c.dialRes = nil
	}
	if c.p.Service(nil) {
		lc.Unwatch(tc)
	}
}

// finish ends the connection and forgets it (lcore only).
func (c *Conn) finish(lc *rt.Lcore) {
	lc.Unwatch(c.p.Conn())
	c.p.Finish()
}

func (c *Conn) opErr(op string, err error) error {
	var src, dst net.Addr
	if c.la.Port != 0 {
		src = tcpAddr(c.la)
	}
	if c.ra.Port != 0 {
		dst = tcpAddr(c.ra)
	}
	return opError(op, src, dst, err)
}

// Read implements net.Conn.
func (c *Conn) Read(p []byte) (int, error) {
	c.rdMu.Lock()
	defer c.rdMu.Unlock()
	for {
		seen := c.rdSig.now() // before the look (see lazySig)
		if c.p.Closed() {
			return 0, c.opErr("read", net.ErrClosed)
		}
		if c.rdDl.Load().expired() {
			return 0, c.opErr("read", os.ErrDeadlineExceeded)
		}
		n, err := c.p.Read(p)
		switch {
		case n > 0:
			if c.lat != nil {
				if at := c.rxAt.Load(); at > 0 {
					c.lat.record(c.lc.ID(), c.lc.Now()-time.Duration(at))
				}
			}
			return n, nil
		case err == nil:
			return 0, nil
		case err == sockring.ErrWouldBlock:
			c.rdSig.wait(seen)
		case err == io.EOF:
			return 0, io.EOF
		case err == sockring.ErrClosed:
			return 0, c.opErr("read", net.ErrClosed)
		default:
			return 0, c.opErr("read", sysErr("read", err))
		}
	}
}

// Write implements net.Conn. It returns once every byte is in the send
// ring (the lcore hands them to TCP), or with a short count on error.
func (c *Conn) Write(p []byte) (int, error) {
	c.wrMu.Lock()
	defer c.wrMu.Unlock()
	total := 0
	for {
		seen := c.wrSig.now() // before the look (see lazySig)
		if c.p.Closed() {
			return total, c.opErr("write", net.ErrClosed)
		}
		if c.wrDl.Load().expired() {
			return total, c.opErr("write", os.ErrDeadlineExceeded)
		}
		n, err := c.p.Write(p[total:], 0, false)
		total += n
		switch {
		case err == sockring.ErrWouldBlock:
			c.wrSig.wait(seen)
		case err == sockring.ErrClosed:
			return total, c.opErr("write", net.ErrClosed)
		case err == sockring.ErrShutdown:
			return total, c.opErr("write", os.NewSyscallError("write", syscall.EPIPE))
		case err != nil:
			return total, c.opErr("write", sysErr("write", err))
		case total == len(p):
			return total, nil
		}
	}
}

// Close implements net.Conn. Bytes already written are still sent, then
// a FIN, as with close(2) on a kernel socket; pending Read and Write
// calls return net.ErrClosed.
func (c *Conn) Close() error {
	if !c.p.Close() {
		return c.opErr("close", net.ErrClosed)
	}
	c.rdSig.signal()
	c.wrSig.signal()
	return nil
}

// CloseWrite shuts the sending side down: a FIN follows the bytes
// written so far (shutdown(2) with SHUT_WR). Reading goes on.
func (c *Conn) CloseWrite() error {
	if c.p.CloseWrite() != nil {
		return c.opErr("close", net.ErrClosed)
	}
	return nil
}

// readDeadline and writeDeadline return the connection's deadlines,
// making them on first use (most connections never set one).
func (c *Conn) readDeadline() *deadline  { return lazyDeadline(&c.rdDl, &c.rdSig) }
func (c *Conn) writeDeadline() *deadline { return lazyDeadline(&c.wrDl, &c.wrSig) }

func lazyDeadline(p *atomic.Pointer[deadline], sig *lazySig) *deadline {
	if d := p.Load(); d != nil {
		return d
	}
	p.CompareAndSwap(nil, newDeadline(sig.get()))
	return p.Load()
}

// LocalAddr implements net.Conn.
func (c *Conn) LocalAddr() net.Addr { return optAddr(c.la) }

// RemoteAddr implements net.Conn.
func (c *Conn) RemoteAddr() net.Addr { return optAddr(c.ra) }

// optAddr returns a as a *net.TCPAddr, or a nil one when not known yet
// (as the address fields held before).
func optAddr(a tcp.Addr) net.Addr {
	if a.Port == 0 {
		return (*net.TCPAddr)(nil)
	}
	return tcpAddr(a)
}

// SetDeadline implements net.Conn.
func (c *Conn) SetDeadline(t time.Time) error {
	if c.p.Closed() {
		return c.opErr("set", net.ErrClosed)
	}
	c.readDeadline().set(t)
	c.writeDeadline().set(t)
	return nil
}

// SetReadDeadline implements net.Conn.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.p.Closed() {
		return c.opErr("set", net.ErrClosed)
	}
	c.readDeadline().set(t)
	return nil
}

// SetWriteDeadline implements net.Conn.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if c.p.Closed() {
		return c.opErr("set", net.ErrClosed)
	}
	c.writeDeadline().set(t)
	return nil
}

// Lcore returns the lcore that serves the connection (the fd->stack
// routing entry).
func (c *Conn) Lcore() int { return c.lc.ID() }

var _ net.Conn = (*Conn)(nil)

// Info returns the engine's view of the connection (state, RTT, windows),
// like TCP_INFO; it asks the lcore and waits.
func (c *Conn) Info() (tcp.ConnInfo, error) {
	res := make(chan tcp.ConnInfo, 1)
	if err := c.lc.Submit(func(*rt.Lcore) {
		tc := c.p.Conn()
		if tc == nil {
			res <- tcp.ConnInfo{}
			return
		}
		res <- tc.Info()
	}); err != nil {
		return tcp.ConnInfo{}, err
	}
	select {
	case i := <-res:
		return i, nil
	case <-c.lc.Done():
		return tcp.ConnInfo{}, rt.ErrStopped
	}
}
