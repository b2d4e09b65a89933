package sockring

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/savanna-sim/savanna/stack/tcp"
)

// ErrWouldBlock is a non-blocking call's EAGAIN: nothing to read yet, or
// no room to write; the driver waits for its Driver's wake and retries.
var ErrWouldBlock = errors.New("sockring: would block")

// ErrClosed is returned by calls on a pipe its application closed.
var ErrClosed = errors.New("sockring: closed")

// ErrShutdown is returned by a write after CloseWrite (EPIPE).
var ErrShutdown = errors.New("sockring: write after shutdown")

// Driver is a driver's policy for one connection.
type Driver interface {
	// Kick asks the stack thread to serve the pipe (the application
	// wrote, closed, shut down, or made room in a stalled receive
	// ring). Called on the application's side.
	Kick()
	// Readable wakes a reader: bytes, EOF or an error arrived. Called
	// on the stack thread.
	Readable()
	// Writable wakes a writer: the send ring has room, or an error
	// arrived. Called on the stack thread.
	Writable()
}

// RxStamper is an optional part of a Driver: RxStamp is called on the
// stack thread when bytes go into an empty receive ring (the start of a
// read latency; stack/gonet's ReadLatency).
type RxStamper interface {
	RxStamp()
}

// Clock is the stack thread's clock, for the hand-offs of what it
// writes into the receive ring; nil is a clock that always says 0 (an
// immediate hand-off ignores it).
type Clock func() time.Duration

// Pipe is one connection's rings and the state both sides share. The
// application side's methods (Read, Write, Close, CloseWrite) run on the
// application's thread; the stack side's (Attach, Service, Receive,
// Fail) on the stack thread that owns the tcp.Conn.
type Pipe struct {
	rx, tx Ring
	drv    Driver
	stamp  RxStamper
	clock  Clock

	// Set by the stack thread, read by the application.
	eof     atomic.Bool
	errp    atomic.Pointer[error]
	rxStall atomic.Bool

	// Set by the application, read by the stack thread.
	closed atomic.Bool
	shutW  atomic.Bool

	// Stack thread only.
	tc       *tcp.Conn
	eofSeen  bool
	shutDone bool
	gone     bool
	// direct: bytes went straight into rx (Receive) since the last
	// service, which wakes the reader.
	direct bool
	// rxMark and txMark are the rings' write counts (low 32 bits) at the
	// last ReleaseIdle: a ring written since keeps its storage until the
	// next one.
	rxMark, txMark uint32
}

// Config is a pipe's rings and hand-offs.
type Config struct {
	// RxRing and TxRing are the most bytes each ring holds (powers of
	// two).
	RxRing, TxRing int
	// RxHandoff and TxHandoff publish each ring's writes; nil publishes
	// them at once.
	RxHandoff, TxHandoff Handoff
	// Clock is the stack thread's clock (see Clock).
	Clock Clock
	// Storage, when not nil, lends both rings their storage, which
	// ReleaseIdle gives back while they are drained (see Storage); nil
	// keeps a
	// ring's storage for its life (the virtual-time drivers: the
	// storage's size decides how much one write moves, so keeping it is
	// part of the simulated behaviour).
	Storage *Storage
}

// Init makes p, a zero Pipe (one embedded in a driver's connection, to
// spare an allocation), a pipe with empty rings.
func (p *Pipe) Init(cfg Config, drv Driver) {
	p.rx.max, p.rx.storage = int32(cfg.RxRing), cfg.Storage
	p.tx.max, p.tx.storage = int32(cfg.TxRing), cfg.Storage
	p.rx.setHandoff(cfg.RxHandoff)
	p.tx.setHandoff(cfg.TxHandoff)
	p.tx.guarded = cfg.Storage != nil
	p.drv, p.clock = drv, cfg.Clock
	p.stamp, _ = drv.(RxStamper)
}

// Rx and Tx return the receive ring (stack to application) and the send
// ring (application to stack).
func (p *Pipe) Rx() *Ring { return &p.rx }

// Tx returns the send ring.
func (p *Pipe) Tx() *Ring { return &p.tx }

func (p *Pipe) now() time.Duration {
	if p.clock == nil {
		return 0
	}
	return p.clock()
}

// Conn returns the engine's connection (stack thread only), nil before
// Attach.
func (p *Pipe) Conn() *tcp.Conn { return p.tc }

// Attach binds the engine's connection (stack thread only). When direct
// is true arriving in-order bytes go straight into the receive ring
// (tcp.Conn.SetDirectReceiver), sparing the copy through TCP's buffer.
func (p *Pipe) Attach(tc *tcp.Conn, direct bool) {
	p.tc = tc
	if direct {
		tc.SetDirectReceiver(p.Receive)
	}
}

// Receive takes in-order bytes straight from an arriving segment into
// the receive ring (stack thread; tcp.Conn.SetDirectReceiver). It takes
// nothing once the application closed (the bytes then stay in TCP, and
// closing with unread data aborts).
func (p *Pipe) Receive(b []byte) int {
	if p.eofSeen || p.closed.Load() {
		return 0
	}
	empty := p.rx.used() == 0
	n := p.rx.Write(b, p.now())
	if n > 0 {
		p.direct = true
		p.stamped(empty)
	}
	return n
}

// ReleaseIdle gives back the storage of each ring that is drained and
// has not been written since the last call, so that an idle connection
// holds no ring memory while a busy one keeps its storage between
// messages (stack thread only; a no-op without Config.Storage). The
// next write takes storage again, of the size the ring had grown to.
func (p *Pipe) ReleaseIdle() {
	if p.rx.storage == nil {
		return
	}
	if w := uint32(p.rx.written.Load()); w != p.rxMark {
		p.rxMark = w
	} else {
		p.rx.releaseDrained(false)
	}
	if w := uint32(p.tx.written.Load()); w != p.txMark {
		p.txMark = w
	} else {
		p.tx.releaseDrained(true)
	}
}

// Fail ends the pipe with err as the stack thread sees it (the stack
// stopped, the connection failed): both sides' waiters are woken.
func (p *Pipe) Fail(err error) {
	if p.errp.CompareAndSwap(nil, &err) {
		p.drv.Readable()
		p.drv.Writable()
	}
}

// Err returns the error the pipe failed with, nil while it has not.
func (p *Pipe) Err() error {
	if e := p.errp.Load(); e != nil {
		return *e
	}
	return nil
}

// Closed reports whether the application closed the pipe.
func (p *Pipe) Closed() bool { return p.closed.Load() }

// Gone reports whether the stack thread finished with the connection.
func (p *Pipe) Gone() bool { return p.gone }

// Service moves bytes between the rings and the engine and carries out
// half-close and close (stack thread only). It runs on every readiness
// event and every kick, and reports whether the connection is finished
// (closed or aborted; the driver then forgets it). Stats, when not nil,
// count what it did.
func (p *Pipe) Service(st *ServiceStats) (finished bool) {
	if p.gone || p.tc == nil {
		return p.gone
	}
	p.pushTx(st)
	if !p.closed.Load() {
		p.pullRx(st)
	}
	if err := p.tc.Err(); err != nil {
		p.Fail(err)
	}
	if (p.shutW.Load() || p.closed.Load()) && !p.shutDone && p.tx.used() == 0 && p.errp.Load() == nil {
		p.shutDone = true
		if !p.closed.Load() {
			_ = p.tc.CloseWrite()
		}
	}
	if p.closed.Load() && (p.tx.used() == 0 || p.errp.Load() != nil) {
		p.Finish()
		return true
	}
	return false
}

// Finish closes the engine's connection (stack thread only). Unread
// received bytes make it an abort (RST), as Linux does on close(2)
// (RFC 2525 section 2.17).
func (p *Pipe) Finish() {
	if p.gone {
		return
	}
	p.gone = true
	p.tx.releaseDrained(true)
	if p.rx.used() > 0 || p.tc.RecvBuffered() > 0 {
		p.tc.Abort()
		return
	}
	_ = p.tc.Close()
}

// ServiceStats count a pipe's service.
type ServiceStats struct {
	// SendBytes are the bytes written to TCP; SendBlocked the times
	// TCP's send buffer left some in the send ring.
	SendBytes, SendBlocked uint64
	// RecvBytes are the bytes moved from TCP to the receive ring;
	// RecvRingFull the times the ring had no room, leaving data in TCP
	// until the application reads (back-pressure, not a loss).
	RecvBytes, RecvRingFull uint64
}

func (p *Pipe) pushTx(st *ServiceStats) {
	freed := false
	for {
		b := p.tx.Readable()
		if len(b) == 0 {
			break
		}
		n, err := p.tc.Write(b)
		if n > 0 {
			p.tx.Consume(n)
			freed = true
			if st != nil {
				st.SendBytes += uint64(n)
			}
		}
		if err != nil {
			if !errors.Is(err, tcp.ErrWouldBlock) {
				p.Fail(err)
			} else if st != nil {
				st.SendBlocked++
			}
			break
		}
		if n < len(b) {
			if st != nil {
				st.SendBlocked++
			}
			break
		}
	}
	if freed {
		p.drv.Writable()
	}
}

func (p *Pipe) pullRx(st *ServiceStats) {
	if p.eofSeen {
		return
	}
	got := p.direct
	p.direct = false
	if p.rx.storage != nil && p.tc.RecvBuffered() == 0 {
		// Nothing to move: learn an EOF or error without taking
		// storage for a ring that would stay empty.
		p.pullNothing(got)
		return
	}
	// Size the ring for what TCP holds (it grows only while empty).
	p.rx.Reserve(p.tc.RecvBuffered())
	for {
		w := p.rx.Writable()
		if len(w) == 0 {
			// Full: ask the reader to kick us once it made room, and
			// look again in case it already did.
			p.rxStall.Store(true)
			if p.rx.Space() == 0 {
				if st != nil {
					st.RecvRingFull++
				}
				break
			}
			p.rxStall.Store(false)
			continue
		}
		empty := p.rx.used() == 0
		n, err := p.tc.Read(w)
		if n > 0 {
			p.rx.Commit(n)
			p.stamped(empty)
			got = true
			if st != nil {
				st.RecvBytes += uint64(n)
			}
		}
		if err == io.EOF {
			p.eofSeen = true
			p.rx.Flush(p.now())
			p.eof.Store(true)
			got = true
			break
		}
		if err != nil {
			if !errors.Is(err, tcp.ErrWouldBlock) {
				p.rx.Flush(p.now())
				p.Fail(err)
			}
			break
		}
		if n == 0 {
			break
		}
	}
	p.rx.Flush(p.now())
	if got {
		p.drv.Readable()
	}
}

// pullNothing is pullRx when TCP holds no bytes: an EOF or an error is
// all Read can return (a tcp.Conn's Read with nothing buffered touches
// no buffer). got tells whether bytes went straight into the ring.
func (p *Pipe) pullNothing(got bool) {
	_, err := p.tc.Read(nil)
	switch {
	case err == io.EOF:
		p.eofSeen = true
		p.rx.Flush(p.now())
		p.eof.Store(true)
		got = true
	case err != nil && !errors.Is(err, tcp.ErrWouldBlock):
		p.rx.Flush(p.now())
		p.Fail(err)
	}
	p.rx.Flush(p.now())
	if got {
		p.drv.Readable()
	}
}

// stamped calls the driver's RxStamp for bytes that went into an empty
// receive ring.
func (p *Pipe) stamped(wasEmpty bool) {
	if wasEmpty && p.stamp != nil {
		p.stamp.RxStamp()
	}
}

// The application side.

// Read copies received bytes into b. Nothing yet is ErrWouldBlock (bytes
// written by the stack but not yet handed off included); the end of the
// stream is io.EOF once every byte before it was read; a failed
// connection is its error, likewise.
func (p *Pipe) Read(b []byte) (int, error) {
	if p.closed.Load() {
		return 0, ErrClosed
	}
	for {
		if len(b) == 0 {
			return 0, nil
		}
		if n := p.rx.Read(b); n > 0 {
			if p.rxStall.Load() && p.rxStall.CompareAndSwap(true, false) {
				p.drv.Kick()
			}
			return n, nil
		}
		if p.rx.InFlight() > 0 {
			return 0, ErrWouldBlock
		}
		if p.eof.Load() {
			if p.rx.Len() == 0 {
				return 0, io.EOF
			}
			continue // bytes arrived just before the EOF
		}
		if e := p.errp.Load(); e != nil {
			if p.rx.Len() == 0 {
				return 0, *e
			}
			continue
		}
		return 0, ErrWouldBlock
	}
}

// Readable reports whether Read would return bytes, EOF or an error now
// or once bytes on their way are handed off.
func (p *Pipe) Readable() bool {
	return p.rx.Len() > 0 || p.rx.InFlight() > 0 || p.eof.Load() || p.errp.Load() != nil
}

// Write copies as much of b into the send ring as fits, hands it off at
// the application's clock at and kicks the stack thread; a full ring is
// (0, ErrWouldBlock). all makes it take all of b or nothing.
func (p *Pipe) Write(b []byte, at time.Duration, all bool) (int, error) {
	n, err := p.Put(b, all)
	if n > 0 {
		p.Push(at)
	}
	return n, err
}

// Put is Write's first half: it copies into the send ring without
// handing the bytes off, so that a driver that charges the copy can hand
// them off at the clock the copy ends (Push).
func (p *Pipe) Put(b []byte, all bool) (int, error) {
	switch {
	case p.closed.Load():
		return 0, ErrClosed
	case p.errp.Load() != nil:
		return 0, *p.errp.Load()
	case p.shutW.Load():
		return 0, ErrShutdown
	case len(b) == 0:
		return 0, nil
	}
	n := p.put(b, all)
	if n == 0 {
		return 0, ErrWouldBlock
	}
	return n, nil
}

// put copies what fits of b (all of it or nothing when all is set) into
// the send ring, holding its storage while it does.
func (p *Pipe) put(b []byte, all bool) int {
	p.tx.acquire()
	defer p.tx.release()
	p.tx.Reserve(len(b))
	if all && p.tx.Space() < len(b) {
		return 0
	}
	n := 0
	for n < len(b) {
		w := p.tx.Writable()
		if len(w) == 0 {
			break
		}
		c := copy(w, b[n:])
		p.tx.Commit(c)
		n += c
	}
	return n
}

// Push is Write's second half: it hands what Put copied to the stack
// thread at the application's clock at and kicks it.
func (p *Pipe) Push(at time.Duration) {
	p.tx.Flush(at)
	p.drv.Kick()
}

// Close closes the pipe: bytes already written are still sent, then a
// FIN (or an RST when received bytes were left unread). It reports
// false when the pipe was already closed.
func (p *Pipe) Close() bool {
	if !p.closed.CompareAndSwap(false, true) {
		return false
	}
	p.drv.Kick()
	return true
}

// Abandon marks the pipe closed without asking the stack thread to
// serve it: for a pipe whose connection never reached the stack (a
// failed dial).
func (p *Pipe) Abandon() { p.closed.Store(true) }

// CloseWrite shuts the sending side down: a FIN follows the bytes
// written so far (shutdown(2) with SHUT_WR). Reading goes on.
func (p *Pipe) CloseWrite() error {
	if p.closed.Load() {
		return ErrClosed
	}
	p.shutW.Store(true)
	p.drv.Kick()
	return nil
}

// EOF reports whether the stack saw the end of the stream.
func (p *Pipe) EOF() bool { return p.eof.Load() }
