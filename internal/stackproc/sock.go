package stackproc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
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

	// Request loop only.
	port uint16
	addr [4]byte

	// Set once by the request loop or the dial.
	ln   *gonet.Listener
	acc  chan *gonet.Conn
	conn atomic.Pointer[gonet.Conn]

	txKick, rxKick chan struct{}
	closing        chan struct{}
	closeOnce      sync.Once
	shutReq        atomic.Bool
	readerDone     chan struct{}

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

func (k *sock) setLocal(a [4]byte, port uint16) {
	k.p.mem.u32(k.off + sLAddr).Store(binary.LittleEndian.Uint32(a[:]))
	k.p.mem.u32(k.off + sLPort).Store(uint32(port))
}

func (k *sock) setRemote(a [4]byte, port uint16) {
	k.p.mem.u32(k.off + sRAddr).Store(binary.LittleEndian.Uint32(a[:]))
	k.p.mem.u32(k.off + sRPort).Store(uint32(port))
}

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

func (k *sock) bind(addr [4]byte, port uint16) unix.Errno {
	switch k.state() {
	case stSocket:
	default:
		return unix.EINVAL // bind(2): already bound
	}
	if addr != [4]byte{} && addr != k.p.s.r.Addr() {
		return unix.EADDRNOTAVAIL
	}
	got, errno := k.p.s.bindPort(k, port)
	if errno != 0 {
		return errno
	}
	k.port, k.addr = got, addr
	k.setLocal(addr, got)
	k.setState(stBound)
	return 0
}

func (k *sock) listen(backlog int) unix.Errno {
	switch k.state() {
	case stListen:
		return 0 // listen(2) again only changes the backlog
	case stSocket:
		if errno := k.bind([4]byte{}, 0); errno != 0 {
			return errno
		}
	case stBound:
	default:
		return unix.EINVAL
	}
	// Linux caps the backlog at net.core.somaxconn (4096 since 5.4).
	backlog = min(max(backlog, 1), 4096)
	ln, err := gonet.ListenOptions(k.p.s.r, k.port, backlog, k.p.s.cfg.Conn)
	if err != nil {
		return errnoOf(err)
	}
	k.ln, k.acc = ln, make(chan *gonet.Conn, backlog)
	k.setState(stListen)
	k.p.mu.Lock()
	k.st.Kind, k.st.Local = "listen", fmt.Sprintf("%s:%d", net.IP(k.addr[:]), k.port)
	k.p.mu.Unlock()
	k.p.wg.Add(1)
	go k.acceptLoop()
	return 0
}

// acceptLoop moves accepted connections into the socket's accept queue,
// at most backlog of them, as the kernel's accept queue holds them.
func (k *sock) acceptLoop() {
	defer k.p.wg.Done()
	for {
		c, err := k.ln.Accept()
		if err != nil {
			return
		}
		select {
		case k.acc <- c.(*gonet.Conn):
			k.p.mem.u32(k.off + sAccq).Add(1)
			k.p.notify(k.slot)
		case <-k.closing:
			_ = c.Close()
			return
		}
	}
}

func (k *sock) accept(r []byte) (int, unix.Errno) {
	if k.state() != stListen {
		return -1, unix.EINVAL
	}
	var c *gonet.Conn
	select {
	case c = <-k.acc:
		k.p.mem.u32(k.off + sAccq).Add(^uint32(0))
	default:
		return -1, unix.EAGAIN
	}
	n, errno := k.p.newSock()
	if errno != 0 {
		_ = c.Close()
		return -1, errno
	}
	ra := c.RemoteAddr().(*net.TCPAddr)
	binary.BigEndian.PutUint16(r[pPort:], uint16(ra.Port))
	copy(r[pAddr:pAddr+4], ra.IP.To4())
	k.p.mu.Lock()
	k.st.Accepts++
	k.p.st.Accepted++
	k.p.mu.Unlock()
	n.attach(c, "accepted")
	return n.slot, 0
}

func tcpAddr4(a net.Addr) ([4]byte, uint16) {
	var out [4]byte
	t, ok := a.(*net.TCPAddr)
	if !ok {
		return out, 0
	}
	copy(out[:], t.IP.To4())
	return out, uint16(t.Port)
}

// attach starts serving a connection in k's rings.
func (k *sock) attach(c *gonet.Conn, kind string) {
	k.conn.Store(c)
	la, lp := tcpAddr4(c.LocalAddr())
	ra, rp := tcpAddr4(c.RemoteAddr())
	k.setLocal(la, lp)
	k.setRemote(ra, rp)
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

func (k *sock) connect(addr [4]byte, port uint16) unix.Errno {
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
	k.setState(stConnecting)
	raddr := &net.TCPAddr{IP: net.IP(addr[:]).To4(), Port: int(port)}
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
	case k.ln != nil:
		_ = k.ln.Close()
		for {
			select {
			case c := <-k.acc:
				_ = c.Close()
				continue
			default:
			}
			break
		}
		k.p.s.releasePort(k, k.port)
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
			n, err := c.Write(b)
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
		}
		if closing() {
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
	_ = c.Close()
	<-k.readerDone
	k.p.freeSock(k)
}
