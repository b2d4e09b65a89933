package stackproc

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/savanna-sim/savanna/stack/gonet"
	"golang.org/x/sys/unix"
)

// connectTimeout bounds a connect as Linux's default tcp_syn_retries (6)
// does: about 127 s (the stack's own SYN timeout may end it first).
const connectTimeout = 127 * time.Second

// sock is one socket of a process: its slot, and what it is on the
// stack (nothing yet, a listener or a connection).
type sock struct {
	p    *proc
	slot int
	off  int
	rx   ByteRing
	tx   ByteRing

	// Request loop only (fam before the socket is used).
	fam    int // fam4 or fam6
	v6only bool
	takes  uint8 // take4, take6: what a bound socket accepts
	port   uint16
	addr   netip.Addr

	// Set once by the request loop or the dial.
	lst  *listener
	conn atomic.Pointer[gonet.Conn]
	// sh is set once the connection is held by a forked child too.
	sh atomic.Pointer[shared]

	txKick, rxKick chan struct{}
	closing        chan struct{}
	closeOnce      sync.Once
	shutReq        atomic.Bool
	readerDone     chan struct{}
	// sideStop and sideDone run a holder's side writer (sidewriter.go):
	// a shared connection's holder that is not the active one still
	// sends what it writes. Nil without one.
	sideStop, sideDone chan struct{}
	// txMu makes taking bytes off tx one consumer's act when both the
	// side writer and the active holder's writer (flushSides) may take
	// them.
	txMu sync.Mutex

	st SockStats // under p.mu once the socket's goroutines run
}

func (k *sock) kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (k *sock) state() uint32     { return k.p.mem.u32(k.off + sState).Load() }
func (k *sock) setState(s uint32) { k.p.mem.u32(k.off + sState).Store(s) }

// errnoOf is the errno a stack error stands for (gonet wraps Linux's).
func errnoOf(err error) unix.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return unix.Errno(e)
	}
	return unix.EIO
}

// fail ends the connection with err (SO_ERROR, and every later read and
// write, as Linux's sk_err).
func (k *sock) fail(err error) {
	errno := errnoOf(err)
	k.p.mem.i32(k.off + sErr).Store(int32(errno))
	fl := k.p.mem.u32(k.off + sFlags)
	fl.Or(fErr | fWDone)
	k.p.mu.Lock()
	if k.st.End == "" {
		k.st.End = errno.Error()
	}
	k.p.mu.Unlock()
}

// bind reserves addr:port; flags are request BIND's (bit 0
// SO_REUSEPORT, bit 1 IPV6_V6ONLY).
func (k *sock) bind(addr netip.Addr, port uint16, flags int32) unix.Errno {
	switch k.state() {
	case stSocket:
	default:
		return unix.EINVAL // bind(2): already bound
	}
	reuse, v6only := flags&1 != 0, flags&2 != 0 && k.fam == fam6
	takes, errno := k.bindAddr(addr, v6only)
	if errno != 0 {
		return errno
	}
	got, errno := k.p.s.bindPort(k, port, reuse, takes)
	if errno != 0 {
		return errno
	}
	k.port, k.addr, k.takes, k.v6only = got, addr, takes, v6only
	k.setLocal(addr, got)
	k.setState(stBound)
	return 0
}

// listen makes k a listener; flags are BIND's, for a socket listen
// binds itself (inet_autobind).
func (k *sock) listen(backlog int, flags int32) unix.Errno {
	switch k.state() {
	case stListen:
		return 0 // listen(2) again only changes the backlog
	case stSocket:
		if errno := k.bind(k.unspecified(), 0, flags&^1); errno != 0 {
			return errno
		}
	case stBound:
	default:
		return unix.EINVAL
	}
	// Linux caps the backlog at net.core.somaxconn (4096 since 5.4).
	backlog = min(max(backlog, 1), 4096)
	l, errno := k.p.s.listenOn(k, backlog)
	if errno != 0 {
		return errno
	}
	k.lst = l
	l.addMember(k)
	k.setState(stListen)
	k.p.mu.Lock()
	k.st.Slot, k.st.Kind, k.st.Local = k.slot, "listen", netip.AddrPortFrom(k.addr, k.port).String()
	k.p.mu.Unlock()
	return 0
}

func (k *sock) accept(r []byte) (int, unix.Errno) {
	if k.state() != stListen || k.lst == nil {
		return -1, unix.EINVAL
	}
	c := k.lst.take()
	if c == nil {
		return -1, unix.EAGAIN
	}
	n, errno := k.p.newSock(k.fam)
	if errno != 0 {
		_ = c.Close()
		return -1, errno
	}
	k.putAddr(r, addrPort(c.RemoteAddr()))
	k.p.mu.Lock()
	k.st.Accepts++
	k.p.st.Accepted++
	k.p.mu.Unlock()
	n.attach(c, "accepted")
	return n.slot, 0
}

// attach starts serving a connection in k's rings.
func (k *sock) attach(c *gonet.Conn, kind string) {
	k.conn.Store(c)
	la, ra := addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
	k.setLocal(la.Addr(), la.Port())
	k.setRemote(ra.Addr(), ra.Port())
	k.p.mu.Lock()
	k.st.Slot, k.st.Kind = k.slot, kind
	k.st.Local, k.st.Remote = c.LocalAddr().String(), c.RemoteAddr().String()
	k.p.mu.Unlock()
	k.readerDone = make(chan struct{})
	k.setState(stConnected)
	k.p.wg.Add(2)
	go k.reader(c)
	go k.writer(c)
	k.p.notify(k.slot)
}

func (k *sock) connect(addr netip.Addr, port uint16) unix.Errno {
	switch k.state() {
	case stConnecting:
		return unix.EALREADY
	case stConnected, stClosing:
		return unix.EISCONN
	case stListen, stFailed:
		return unix.EINVAL
	}
	if port == 0 {
		return unix.ECONNREFUSED
	}
	raddr, errno := k.dialAddr(addr, port)
	if errno != 0 {
		return errno
	}
	k.setState(stConnecting)
	k.p.wg.Add(1)
	go func() {
		defer k.p.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		go func() {
			select {
			case <-k.closing:
			case <-ctx.Done():
			}
			cancel()
		}()
		c, err := gonet.DialTCP(ctx, k.p.s.r, raddr)
		cancel()
		if err != nil {
			k.p.mu.Lock()
			k.p.st.ConnectFailed++
			k.st.Kind, k.st.Remote = "connect", raddr.String()
			k.p.mu.Unlock()
			if ctx.Err() != nil && !errors.Is(err, syscall.ECONNREFUSED) {
				err = syscall.ETIMEDOUT
			}
			k.fail(err)
			k.setState(stFailed)
			k.p.notify(k.slot)
			return
		}
		select {
		case <-k.closing:
			_ = c.Close()
			return
		default:
		}
		k.p.mu.Lock()
		k.p.st.Connected++
		k.p.mu.Unlock()
		k.attach(c, "connected")
	}()
	return unix.EINPROGRESS
}

func (k *sock) shutdown(how int) unix.Errno {
	if k.state() != stConnected {
		return unix.ENOTCONN
	}
	if how == unix.SHUT_WR || how == unix.SHUT_RDWR {
		k.shutReq.Store(true)
		k.kick(k.txKick)
	}
	return 0
}

// close is close(2): a listener stops at once (its queued connections
// reset, as Linux's inet_csk_listen_stop); a connection sends what the
// app wrote, then its FIN, and frees its slot when both its goroutines
// end; anything else frees its slot now.
func (k *sock) close() {
	k.closeOnce.Do(func() { close(k.closing) })
	st := k.state()
	switch {
	case k.lst != nil:
		// One holder fewer; the listener closes with its last
		// (inet_csk_listen_stop resets its queue then).
		k.lst.removeMember(k)
		k.p.freeSock(k)
	case (st == stConnected || st == stClosing) && k.sh.Load() != nil && k.sh.Load().detach(k):
		// A holder of a shared connection waiting for its turn: its
		// copy goes, the connection stays with the others. Its side
		// writer sends what it wrote first, then frees the slot.
		k.setState(stClosing)
		if k.sideDone != nil {
			k.kick(k.txKick)
			return
		}
		k.p.freeSock(k)
	case st == stConnected || st == stClosing:
		k.setState(stClosing)
		k.kick(k.txKick)
		k.kick(k.rxKick)
	case st == stConnecting:
		// The dial goroutine sees closing and gives up; the slot is
		// the app's no more.
		k.p.freeSock(k)
	default:
		if k.port != 0 {
			k.p.s.releasePort(k, k.port)
		}
		k.p.freeSock(k)
	}
}

// reader moves the connection's bytes into the receive ring.
func (k *sock) reader(c *gonet.Conn) {
	defer k.p.wg.Done()
	defer close(k.readerDone)
	wait := k.p.mem.u32(k.off + sRxWait)
	for {
		w := k.rx.Writable()
		if len(w) == 0 {
			wait.Store(1)
			if k.rx.Space() == 0 {
				k.p.mu.Lock()
				k.st.RxRingFull++
				k.p.mu.Unlock()
				select {
				case <-k.rxKick:
				case <-k.closing:
					wait.Store(0)
					return
				}
			}
			wait.Store(0)
			continue
		}
		n, err := c.Read(w)
		if n > 0 {
			k.rx.Commit(n)
			k.p.mu.Lock()
			k.st.RxBytes += uint64(n)
			k.p.mu.Unlock()
			k.p.notify(k.slot)
		}
		if err != nil {
			select {
			case <-k.closing:
				return
			default:
			}
			if errors.Is(err, io.EOF) {
				k.p.mem.u32(k.off + sFlags).Or(fEOF)
				k.p.mu.Lock()
				if k.st.End == "" {
					k.st.End = "eof"
				}
				k.p.mu.Unlock()
			} else {
				k.fail(err)
			}
			k.p.notify(k.slot)
			return
		}
	}
}

// writer moves the send ring's bytes into the connection, carries out
// shutdown(SHUT_WR) once the ring is empty, and at close sends what is
// left, closes the connection and frees the slot.
func (k *sock) writer(c *gonet.Conn) {
	defer k.p.wg.Done()
	wait := k.p.mem.u32(k.off + sTxWait)
	failed, shut := false, false
	closing := func() bool {
		select {
		case <-k.closing:
			return true
		default:
			return false
		}
	}
	for {
		b := k.tx.Readable()
		switch {
		case len(b) > 0 && failed:
			k.tx.Consume(len(b)) // the app was told (EPIPE) or will be
			continue
		case len(b) > 0:
			// The other holders' bytes go first (flushSides).
			n, err := 0, k.flushSides(c)
			if err == nil {
				n, err = c.Write(b)
			}
			if n > 0 {
				k.tx.Consume(n)
				k.p.mu.Lock()
				k.st.TxBytes += uint64(n)
				k.p.mu.Unlock()
				k.p.notify(k.slot)
			}
			if err != nil {
				failed = true
				if !closing() {
					k.fail(err)
					k.p.notify(k.slot)
				}
			}
			continue
		}
		if k.shutReq.Load() && !shut && !failed {
			shut = true
			// WDONE first: the peer may see the FIN and answer before
			// a flag set after it would show (EPOLLHUP needs both).
			k.p.mem.u32(k.off + sFlags).Or(fWDone)
			_ = c.CloseWrite()
			k.p.notify(k.slot)
			if sh := k.sh.Load(); sh != nil {
				sh.wdone(k) // the forked children's copies too
			}
		}
		if h := k.p.s.cfg.writerIdle; h != nil {
			h(k.slot)
		}
		if closing() {
			// The app's last write may have landed after this turn's
			// Readable and before its close: the ring is final once
			// closing shows (a closed descriptor writes no more), so
			// send what it holds before the FIN.
			if k.tx.Len() > 0 && !failed {
				continue
			}
			break
		}
		wait.Store(1)
		if k.tx.Len() > 0 || closing() || (k.shutReq.Load() && !shut) {
			wait.Store(0)
			continue
		}
		select {
		case <-k.txKick:
		case <-k.closing:
		}
		wait.Store(0)
	}
	if sh := k.sh.Load(); sh != nil && sh.leaving() {
		// Another process holds the connection: it goes on there.
		sh.stopReader(k)
		data, fl, errno := k.unread()
		k.p.s.mu.Lock()
		k.p.s.counters.Handovers++
		k.p.s.counters.HandoverBytes += uint64(len(data))
		k.p.s.mu.Unlock()
		k.p.freeSock(k)
		sh.handover(data, fl, errno)
		return
	}
	_ = c.Close()
	<-k.readerDone
	k.p.freeSock(k)
}
