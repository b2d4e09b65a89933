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
// and, like *net.TCPConn, CloseWrite.
type Conn struct {
	lc   *rt.Lcore
	task *rt.Task
	// la and ra are the addresses, kept as values and made into
	// *net.TCPAddr only when asked for (two allocations less per
	// connection); a zero port means not known yet.
	la, ra tcp.Addr

	rx, tx *byteRing
	// lat records read latency (nil: off); rxAt is the lcore clock
	// (nanoseconds) when bytes last went into an empty receive ring,
	// 0 before any.
	lat  *ReadLatency
	rxAt atomic.Int64
	// rdSig and wrSig wake a blocked Read or Write: readiness, an
	// expired deadline and Close all signal them (one channel each, so a
	// blocked call parks on one channel only).
	rdSig, wrSig chan struct{}
	// rdDl and wrDl are made when a deadline is first set.
	rdDl, wrDl atomic.Pointer[deadline]
	rdMu, wrMu sync.Mutex

	// Set by the lcore, read by the application.
	eof     atomic.Bool
	errp    atomic.Pointer[error]
	rxStall atomic.Bool

	// Set by the application, read by the lcore.
	closed atomic.Bool
	shutW  atomic.Bool

	// Lcore only.
	tc       *tcp.Conn
	eofSeen  bool
	shutDone bool
	gone     bool
	// direct: bytes went straight into rx (receive) since the last
	// pullRx, which wakes the reader.
	direct  bool
	dialRes chan error
}

func newConn(lc *rt.Lcore, o Options) *Conn {
	o = o.withDefaults()
	c := &Conn{lc: lc, rx: newByteRing(o.RxRing), tx: newByteRing(o.TxRing), lat: o.Latency,
		rdSig: make(chan struct{}, 1), wrSig: make(chan struct{}, 1)}
	c.task = rt.NewTask(c.service)
	return c
}

// attach binds the engine's connection (lcore only). Nagle is off, as the
// net package sets TCP_NODELAY on every TCP connection.
func (c *Conn) attach(lc *rt.Lcore, tc *tcp.Conn) {
	c.tc = tc
	c.la, c.ra = tc.LocalAddr(), tc.RemoteAddr()
	tc.SetNoDelay(true)
	tc.SetDirectReceiver(c.receive)
	lc.Watch(tc, c)
}

// receive takes in-order bytes straight from an arriving segment into the
// receive ring (lcore only; tcp.Conn.SetDirectReceiver), sparing the copy
// through TCP's receive buffer. It takes nothing once the application
// closed (the bytes then stay in TCP, and closing with unread data
// aborts, as in finish).
func (c *Conn) receive(p []byte) int {
	if c.eofSeen || c.closed.Load() {
		return 0
	}
	c.rx.reserve(len(p))
	empty := c.rx.length() == 0
	n := c.rx.write(p)
	if n > 0 {
		c.direct = true
		c.stampRx(empty)
	}
	return n
}

// stampRx notes when bytes went into a receive ring that was empty: the
// start of the wait ReadLatency measures (lcore only).
func (c *Conn) stampRx(wasEmpty bool) {
	if c.lat != nil && wasEmpty {
		c.rxAt.Store(max(int64(c.lc.Now()), 1))
	}
}

// RingBytes returns the bytes waiting in the connection's receive ring
// (for the application to read) and send ring (for the lcore to move
// into TCP): the part of its queues TCP does not see. It implements
// rt.RingReporter for socket listings; safe from any goroutine.
func (c *Conn) RingBytes() (rx, tx int) { return c.rx.length(), c.tx.length() }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// ConnEvent implements rt.ConnHandler.
func (c *Conn) ConnEvent(lc *rt.Lcore, _ tcp.EventMask) { c.service(lc) }

// LcoreStopped implements rt.ConnHandler.
func (c *Conn) LcoreStopped() {
	c.setErr(rt.ErrStopped)
	if c.dialRes != nil {
		c.dialRes <- rt.ErrStopped
		c.dialRes = nil
	}
}

func (c *Conn) setErr(err error) {
	if c.errp.CompareAndSwap(nil, &err) {
		signal(c.rdSig)
		signal(c.wrSig)
	}
}

// service moves bytes between the rings and the engine and carries out
// half-close and close (lcore only). It runs on every readiness event and
// every kick from the application.
func (c *Conn) service(lc *rt.Lcore) {
	if c.gone || c.tc == nil {
		return
	}
	if c.dialRes != nil {
		if err := c.tc.Err(); err != nil {
			c.dialRes <- err
			c.dialRes = nil
			c.finish(lc)
			return
		}
		if c.closed.Load() {
			c.dialRes <- net.ErrClosed
			c.dialRes = nil
			c.finish(lc)
			return
		}
		if !c.tc.Connected() {
			return
		}
		c.dialRes <- nil
		c.dialRes = nil
	}
	c.pushTx()
	if !c.closed.Load() {
		c.pullRx()
	}
	if err := c.tc.Err(); err != nil {
		c.setErr(err)
	}
	if (c.shutW.Load() || c.closed.Load()) && !c.shutDone && c.tx.length() == 0 && c.errp.Load() == nil {
		c.shutDone = true
		if !c.closed.Load() {
			_ = c.tc.CloseWrite()
		}
	}
	if c.closed.Load() && (c.tx.length() == 0 || c.errp.Load() != nil) {
		c.finish(lc)
	}
}

// finish closes the engine's connection and forgets it. Unread received
// bytes make it an abort (RST), as Linux does on close(2) (RFC 2525
// section 2.17).
func (c *Conn) finish(lc *rt.Lcore) {
	c.gone = true
	lc.Unwatch(c.tc)
	if c.rx.length() > 0 || c.tc.RecvBuffered() > 0 {
		c.tc.Abort()
		return
	}
	_ = c.tc.Close()
}

func (c *Conn) pushTx() {
	freed := false
	for {
		b := c.tx.readable()
		if len(b) == 0 {
			break
		}
		n, err := c.tc.Write(b)
		if n > 0 {
			c.tx.consume(n)
			freed = true
		}
		if err != nil {
			if !errors.Is(err, tcp.ErrWouldBlock) {
				c.setErr(err)
			}
			break
		}
		if n < len(b) {
			break
		}
	}
	if freed {
		signal(c.wrSig)
	}
}

func (c *Conn) pullRx() {
	if c.eofSeen {
		return
	}
	got := c.direct
	c.direct = false
	// Size the ring for what TCP holds (it grows only while empty).
	c.rx.reserve(c.tc.RecvBuffered())
	for {
		w := c.rx.writable()
		if len(w) == 0 {
			// Full: ask the reader to kick us once it made room, and
			// look again in case it already did.
			c.rxStall.Store(true)
			if c.rx.space() == 0 {
				break
			}
			c.rxStall.Store(false)
			continue
		}
		empty := c.rx.length() == 0
		n, err := c.tc.Read(w)
		if n > 0 {
			c.rx.commit(n)
			c.stampRx(empty)
			got = true
		}
		if err == io.EOF {
			c.eofSeen = true
			c.eof.Store(true)
			got = true
			break
		}
		if err != nil {
			if !errors.Is(err, tcp.ErrWouldBlock) {
				c.setErr(err)
			}
			break
		}
		if n == 0 {
			break
		}
	}
	if got {
		signal(c.rdSig)
	}
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
		if c.closed.Load() {
			return 0, c.opErr("read", net.ErrClosed)
		}
		if c.rdDl.Load().expired() {
			return 0, c.opErr("read", os.ErrDeadlineExceeded)
		}
		if len(p) == 0 {
			return 0, nil
		}
		if n := c.rx.read(p); n > 0 {
			if c.lat != nil {
				if at := c.rxAt.Load(); at > 0 {
					c.lat.record(c.lc.ID(), c.lc.Now()-time.Duration(at))
				}
			}
			if c.rxStall.Load() && c.rxStall.CompareAndSwap(true, false) {
				c.lc.Kick(c.task)
			}
			return n, nil
		}
		if c.eof.Load() {
			if c.rx.length() == 0 {
				return 0, io.EOF
			}
			continue
		}
		if e := c.errp.Load(); e != nil {
			if c.rx.length() == 0 {
				return 0, c.opErr("read", sysErr("read", *e))
			}
			continue
		}
		<-c.rdSig
	}
}

// Write implements net.Conn. It returns once every byte is in the send
// ring (the lcore hands them to TCP), or with a short count on error.
func (c *Conn) Write(p []byte) (int, error) {
	c.wrMu.Lock()
	defer c.wrMu.Unlock()
	total := 0
	for {
		if c.closed.Load() {
			return total, c.opErr("write", net.ErrClosed)
		}
		if c.wrDl.Load().expired() {
			return total, c.opErr("write", os.ErrDeadlineExceeded)
		}
		if e := c.errp.Load(); e != nil {
			return total, c.opErr("write", sysErr("write", *e))
		}
		if c.shutW.Load() {
			return total, c.opErr("write", os.NewSyscallError("write", syscall.EPIPE))
		}
		if total == len(p) {
			return total, nil
		}
		if n := c.tx.write(p[total:]); n > 0 {
			total += n
			c.lc.Kick(c.task)
			continue
		}
		<-c.wrSig
	}
}

// Close implements net.Conn. Bytes already written are still sent, then
// a FIN, as with close(2) on a kernel socket; pending Read and Write
// calls return net.ErrClosed.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return c.opErr("close", net.ErrClosed)
	}
	signal(c.rdSig)
	signal(c.wrSig)
	c.lc.Kick(c.task)
	return nil
}

// CloseWrite shuts the sending side down: a FIN follows the bytes
// written so far (shutdown(2) with SHUT_WR). Reading goes on.
func (c *Conn) CloseWrite() error {
	if c.closed.Load() {
		return c.opErr("close", net.ErrClosed)
	}
	c.shutW.Store(true)
	c.lc.Kick(c.task)
	return nil
}

// readDeadline and writeDeadline return the connection's deadlines,
// making them on first use (most connections never set one).
func (c *Conn) readDeadline() *deadline  { return lazyDeadline(&c.rdDl, c.rdSig) }
func (c *Conn) writeDeadline() *deadline { return lazyDeadline(&c.wrDl, c.wrSig) }

func lazyDeadline(p *atomic.Pointer[deadline], sig chan struct{}) *deadline {
	if d := p.Load(); d != nil {
		return d
	}
	p.CompareAndSwap(nil, newDeadline(sig))
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
	if c.closed.Load() {
		return c.opErr("set", net.ErrClosed)
	}
	c.readDeadline().set(t)
	c.writeDeadline().set(t)
	return nil
}

// SetReadDeadline implements net.Conn.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.closed.Load() {
		return c.opErr("set", net.ErrClosed)
	}
	c.readDeadline().set(t)
	return nil
}

// SetWriteDeadline implements net.Conn.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if c.closed.Load() {
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
		if c.tc == nil {
			res <- tcp.ConnInfo{}
			return
		}
		res <- c.tc.Info()
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
