package stackproc

import (
	"sync"
	"time"

	"github.com/savanna-sim/savanna/stack/gonet"
)

// A shared connection is one connection of the stack that descriptors in
// several processes name: a process held it when it forked, so its child
// has a copy (inetd's and pre-fork servers' "accept in the parent, serve
// in the child", redis's BGSAVE child holding every client). As a Linux
// socket, it ends when the last descriptor in any process closes.
//
// Design: a handover, not several readers. Each holder has a slot in its
// own memfd, but the connection's two goroutines serve one holder's
// rings at a time, the active one (first the process that had it). When
// the active holder closes, its writer sends what it wrote, the reader
// is stopped (a read deadline in the past), the bytes it had received
// and not read move into the next holder's receive ring with the
// connection's EOF or error, and the goroutines start again on that
// holder's rings. While no holder is there yet (the parent closed its
// copy before the child claimed the fork) the unread bytes wait here
// (parked). The others' reads wait and their writes queue in their own
// send ring until their turn, where on Linux both processes could read
// and write at once (docs/preload.md); the inetd pattern, where one
// process uses the connection at a time, behaves as on Linux.
type shared struct {
	c   *gonet.Conn
	fam int

	mu      sync.Mutex
	active  *sock   // whose rings the goroutines serve; nil while parked
	others  []*sock // holders waiting for their turn
	pending int     // fork registrations not yet claimed
	parked  []byte  // unread bytes while no holder is active
	flags   uint32  // EOF, ERR, WDONE carried over
	err     int32
	closed  bool
	// leavers are detached holders whose side writers still send what
	// they wrote; they stay mapped until they leave this list (forget,
	// as their slots are freed).
	leavers []*sock
}

// share makes k's connection shareable (once, before its first fork) and
// holds it for a fork registration; false when k is not a connection.
func (k *sock) share() *shared {
	c := k.conn.Load()
	if c == nil || k.state() != stConnected {
		return nil
	}
	k.p.mu.Lock()
	sh := k.sh.Load()
	if sh == nil {
		sh = &shared{c: c, active: k, fam: k.fam}
		k.sh.Store(sh)
	}
	k.p.mu.Unlock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed {
		return nil
	}
	sh.pending++
	return sh
}

// release drops a registration's hold; a connection nobody holds any
// more closes.
func (sh *shared) release() {
	sh.mu.Lock()
	sh.pending--
	done := sh.active == nil && len(sh.others) == 0 && sh.pending == 0 && !sh.closed
	if done {
		sh.closed = true
	}
	sh.mu.Unlock()
	if done {
		_ = sh.c.Close()
	}
}

// adopt makes k (a forked child's slot) a holder: active at once when
// the connection was parked, waiting otherwise. The registration's hold
// passes to k.
func (sh *shared) adopt(k *sock) bool {
	sh.mu.Lock()
	sh.pending--
	if sh.closed {
		sh.mu.Unlock()
		return false
	}
	k.sh.Store(sh)
	if sh.active != nil {
		sh.others = append(sh.others, k)
		k.startSideWriter(sh.c) // under sh.mu: no handover activates k before it runs
		sh.mu.Unlock()
		return true
	}
	sh.active = k
	data, fl, err := sh.parked, sh.flags, sh.err
	sh.parked = nil
	sh.mu.Unlock()
	if !k.activate(sh.c, data, fl, err) {
		sh.handover(data, fl, err)
	}
	return true
}

// detach takes a holder that is not the active one out (its close);
// false for the active holder, whose close is a handover.
func (sh *shared) detach(k *sock) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.active == k {
		return false
	}
	for i, o := range sh.others {
		if o == k {
			sh.others = append(sh.others[:i], sh.others[i+1:]...)
			break
		}
	}
	if k.sideDone != nil {
		sh.leavers = append(sh.leavers, k)
	}
	if sh.active == nil && len(sh.others) == 0 && sh.pending == 0 && !sh.closed {
		sh.closed = true
		go func() { _ = sh.c.Close() }()
	}
	return true
}

// leaving reports whether anyone but the closing active holder still
// holds the connection (its close then hands over); if not, the
// connection is closed for good (a later claim finds it gone).
func (sh *shared) leaving() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.others) > 0 || sh.pending > 0 {
		return true
	}
	sh.closed, sh.active = true, nil
	return false
}

// stopReader ends the active holder's reader without closing the
// connection: a read deadline in the past wakes its Read, and it sees
// its socket closing.
func (sh *shared) stopReader(k *sock) {
	_ = sh.c.SetReadDeadline(time.Unix(1, 0))
	<-k.readerDone
	_ = sh.c.SetReadDeadline(time.Time{})
}

// handover passes the connection from the closing active holder,
// with the bytes it had not read and its flags, to the next holder; with
// none, the bytes park until a child claims its fork, and with no
// registration either the connection closes.
func (sh *shared) handover(data []byte, fl uint32, err int32) {
	for {
		sh.mu.Lock()
		sh.active = nil
		if len(sh.others) == 0 {
			if sh.pending == 0 {
				sh.closed = true
				sh.mu.Unlock()
				_ = sh.c.Close()
				return
			}
			sh.parked, sh.flags, sh.err = data, fl, err
			sh.mu.Unlock()
			return
		}
		next := sh.others[0]
		sh.others = sh.others[1:]
		sh.active = next
		sh.mu.Unlock()
		if next.activate(sh.c, data, fl, err) {
			return
		}
	}
}

// unread takes the bytes of k's receive ring the app did not read, and
// the flags and errno the next holder inherits.
func (k *sock) unread() ([]byte, uint32, int32) {
	var out []byte
	buf := make([]byte, 16<<10)
	for {
		n := k.rx.Read(buf)
		if n == 0 {
			break
		}
		out = append(out, buf[:n]...)
	}
	fl := k.p.mem.u32(k.off+sFlags).Load() & (fEOF | fErr | fWDone)
	return out, fl, k.p.mem.i32(k.off + sErr).Load()
}

// activate starts serving c in k's rings, the bytes a previous holder
// left unread first; false when k's process is going away.
func (k *sock) activate(c *gonet.Conn, data []byte, fl uint32, err int32) bool {
	p := k.p
	p.mu.Lock()
	if p.tearing || p.socks[k.slot] != k {
		p.mu.Unlock()
		return false
	}
	// Counted in p.wg from here, so that p's teardown does not unmap
	// its memfd while this goroutine (another process's writer) still
	// writes into it.
	p.wg.Add(1)
	defer p.wg.Done()
	p.mu.Unlock()
	k.stopSideWriter() // the writer below goes on from the same send ring
	for len(data) > 0 {
		n := k.rx.Write(data) // an empty ring of the same size: it fits
		if n == 0 {
			break
		}
		data = data[n:]
	}
	if err != 0 {
		p.mem.i32(k.off + sErr).Store(err)
	}
	p.mem.u32(k.off + sFlags).Or(fl)
	k.readerDone = make(chan struct{})
	p.notify(k.slot)
	p.wg.Add(2)
	go k.reader(c)
	go k.writer(c)
	return true
}
