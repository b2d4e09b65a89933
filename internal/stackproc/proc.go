package stackproc

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// proc is one preloaded process: its memfd and its sockets. The request
// loop (run) is the only goroutine that creates sockets; the sockets'
// own goroutines change their slots' state under mu.
type proc struct {
	s    *Server
	c    *net.UnixConn
	pid  int
	comm string
	mem  *sharedMem
	req  recRing
	resp recRing

	mu    sync.Mutex
	socks []*sock // by slot
	free  []int
	done  chan struct{}
	wg    sync.WaitGroup // the sockets' goroutines
	// tearing: the process is going; no connection is handed to it.
	tearing bool
	st      ProcStats
}

func newProc(s *Server, c *net.UnixConn, pid int, mem *sharedMem) *proc {
	p := &proc{s: s, c: c, pid: pid, mem: mem, socks: make([]*sock, mem.g.Slots), done: make(chan struct{})}
	p.req, p.resp = mem.recRing(mem.g.reqOff()), mem.recRing(mem.g.respOff())
	for i := mem.g.Slots - 1; i >= 0; i-- {
		p.free = append(p.free, i)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		p.comm = strings.TrimSpace(string(b))
	}
	p.st = ProcStats{PID: pid, Comm: p.comm}
	return p
}

// run serves the process until its Unix connection closes (it exited or
// crashed), then ends its sockets.
func (p *proc) run() {
	go func() {
		var b [1]byte
		for {
			if _, err := p.c.Read(b[:]); err != nil {
				break // EOF: the process is gone; nothing else is read
			}
		}
		close(p.done)
		p.ring() // wake the loop
	}()
	var b [8]byte
	for {
		_, err := unix.Read(p.mem.toStack, b[:])
		select {
		case <-p.done:
			p.teardown()
			return
		default:
		}
		if err != nil && err != unix.EINTR {
			p.teardown()
			return
		}
		p.bumpStat(&p.st.Doorbells)
		p.serveRequests()
		p.kickWaiting()
	}
}

// bumpStat adds one to a counter of p.st, under p.mu (stats reads them
// from other goroutines).
func (p *proc) bumpStat(c *uint64) {
	p.mu.Lock()
	*c++
	p.mu.Unlock()
}

// ring rings the stack's doorbell (the loop's own wake-up).
func (p *proc) ring() {
	var one [8]byte
	binary.LittleEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(p.mem.toStack, one[:])
}

// ringApp rings the app's doorbell when a thread of it sleeps in epoll
// or poll.
func (p *proc) ringApp() {
	p.mem.u32(hStackGen).Add(1)
	if p.mem.u32(hAppPoll).Load() != 0 {
		futexWake(p.mem.u32(hStackGen))
		var one [8]byte
		binary.LittleEndian.PutUint64(one[:], 1)
		_, _ = unix.Write(p.mem.toApp, one[:])
	}
}

// notify tells the app that slot i changed.
func (p *proc) notify(i int) {
	o := p.mem.g.slot(i)
	bump(p.mem.u32(o+sEv), p.mem.u32(o+sWaiters))
	p.ringApp()
}

// kickWaiting wakes the sockets whose goroutines wait for the app: a
// send ring that was empty and is not, a receive ring that was full and
// is not.
func (p *proc) kickWaiting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, k := range p.socks {
		if k == nil {
			continue
		}
		o := p.mem.g.slot(i)
		if p.mem.u32(o+sTxWait).Load() != 0 {
			k.kick(k.txKick)
		}
		if p.mem.u32(o+sRxWait).Load() != 0 {
			k.kick(k.rxKick)
		}
	}
}

// serveRequests answers every request posted.
func (p *proc) serveRequests() {
	for {
		h := p.req.head.Load()
		if h == p.req.tail.Load() {
			return
		}
		var q [recSize]byte
		copy(q[:], p.req.rec(h))
		p.req.head.Store(h + 1)
		p.bumpStat(&p.st.Requests)
		var r [recSize]byte
		copy(r[pSeq:], q[qSeq:qSeq+4])
		res, errno := p.handle(q[:], r[:])
		binary.LittleEndian.PutUint32(r[pErrno:], uint32(errno))
		binary.LittleEndian.PutUint64(r[pResult:], uint64(res))
		p.respond(r[:])
	}
}

func (p *proc) respond(r []byte) {
	t := p.resp.tail.Load()
	if t-p.resp.head.Load() >= uint64(p.mem.g.Recs) {
		p.bumpStat(&p.st.ResponsesDropped) // the app posts one request at a time; this one broke the protocol
		return
	}
	copy(p.resp.rec(t), r)
	p.resp.tail.Store(t + 1)
	bump(p.resp.ev, p.resp.waiters)
}

// handle carries out one request and returns its result and errno.
func (p *proc) handle(q, r []byte) (int64, unix.Errno) {
	op := binary.LittleEndian.Uint16(q[qOp:])
	slot := int(int32(binary.LittleEndian.Uint32(q[qSlot:])))
	arg := int32(binary.LittleEndian.Uint32(q[qArg:]))
	arg2 := int32(binary.LittleEndian.Uint64(q[qArg2:]))
	port := binary.BigEndian.Uint16(q[qPort:])
	switch op {
	case opSocket:
		fam := famOf(arg)
		if fam == 0 || (fam == fam6 && !p.s.r.HasIPv6()) {
			return -1, unix.EAFNOSUPPORT // a kernel without the family (inet6_create missing)
		}
		k, errno := p.newSock(fam)
		if errno != 0 {
			return -1, errno
		}
		return int64(k.slot), 0
	case opFork:
		return int64(p.s.registerFork(p) >> 1), 0 // the result is signed: 63 bits of the token
	}
	k := p.sock(slot)
	if k == nil {
		p.bumpStat(&p.st.BadRequests)
		return -1, unix.EBADF
	}
	switch op {
	case opBind:
		return 0, k.bind(k.reqAddr(q), port, arg)
	case opListen:
		return 0, k.listen(int(arg), arg2)
	case opAccept:
		n, errno := k.accept(r)
		return int64(n), errno
	case opConnect:
		if k.state() == stSocket && k.fam == fam6 {
			k.v6only = arg&2 != 0 // an unbound socket's IPV6_V6ONLY (bound ones keep bind's)
		}
		return 0, k.connect(k.reqAddr(q), port)
	case opShutdown:
		return 0, k.shutdown(int(arg))
	case opClose:
		k.close()
		return 0, 0
	case opSetOpt:
		return 0, 0
	}
	p.bumpStat(&p.st.BadRequests)
	return -1, unix.EINVAL
}

func (p *proc) sock(i int) *sock {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < 0 || i >= len(p.socks) {
		return nil
	}
	return p.socks[i]
}

// newSock takes a free slot for a socket of family fam and resets its
// header.
func (p *proc) newSock(fam int) (*sock, unix.Errno) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		p.st.SlotsExhausted++
		return nil, unix.EMFILE
	}
	i := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	k := p.initSock(i)
	k.fam = fam
	return k, 0
}

// takeSlot takes slot i off the free list; false when it is taken.
// The caller holds p.mu.
func (p *proc) takeSlot(i int) bool {
	at := slices.Index(p.free, i)
	if at < 0 {
		return false
	}
	p.free = slices.Delete(p.free, at, at+1)
	return true
}

// adoptListener puts listener l in slot i (a forked child's copy of its
// parent's slot i); nil when the slot is taken or l closed.
func (p *proc) adoptListener(i int, l *listener) *sock {
	p.mu.Lock()
	if !p.takeSlot(i) {
		p.mu.Unlock()
		return nil
	}
	k := p.initSock(i)
	k.lst, k.port, k.addr, k.fam, k.takes, k.v6only = l, l.port, l.addr, l.fam, l.takes, l.v6only
	k.setLocal(l.addr, l.port)
	k.st.Slot, k.st.Kind, k.st.Local = i, "listen", netip.AddrPortFrom(l.addr, l.port).String()
	p.st.Inherited++
	p.mu.Unlock()
	if !l.addMember(k) {
		p.mu.Lock()
		p.socks[i] = nil
		p.mem.u32(k.off + sState).Store(stFree)
		p.free = append(p.free, i)
		p.mu.Unlock()
		return nil
	}
	k.setState(stListen)
	return k
}

// adoptConn puts shared connection sh in slot i (a forked child's copy
// of its parent's slot i); false when the slot is taken or sh closed.
func (p *proc) adoptConn(i int, sh *shared) bool {
	p.mu.Lock()
	if !p.takeSlot(i) {
		p.mu.Unlock()
		sh.release()
		return false
	}
	k := p.initSock(i)
	k.fam = sh.fam
	c := sh.c
	k.conn.Store(c)
	la, ra := addrPort(c.LocalAddr()), addrPort(c.RemoteAddr())
	k.setLocal(la.Addr(), la.Port())
	k.setRemote(ra.Addr(), ra.Port())
	k.st.Slot, k.st.Kind, k.st.Local, k.st.Remote = i, "inherited", c.LocalAddr().String(), c.RemoteAddr().String()
	k.readerDone = make(chan struct{})
	close(k.readerDone) // no reader until its turn
	p.st.Inherited++
	p.mu.Unlock()
	k.setState(stConnected)
	if !sh.adopt(k) {
		p.mu.Lock()
		p.socks[i] = nil
		p.mem.u32(k.off + sState).Store(stFree)
		p.free = append(p.free, i)
		p.mu.Unlock()
		return false
	}
	return true
}

// initSock makes slot i (taken from the free list) a new socket; under mu.
func (p *proc) initSock(i int) *sock {
	o := p.mem.g.slot(i)
	clear(p.mem.b[o : o+slotHdr])
	p.mem.u32(o + sState).Store(stSocket)
	k := &sock{p: p, slot: i, off: o, txKick: make(chan struct{}, 1), rxKick: make(chan struct{}, 1),
		closing: make(chan struct{}), rx: p.mem.RxRing(i), tx: p.mem.TxRing(i)}
	p.socks[i] = k
	p.st.Opened++
	return k
}

// freeSock gives slot k back once both sides are done with it.
func (p *proc) freeSock(k *sock) {
	if sh := k.sh.Load(); sh != nil {
		sh.forget(k) // before p.mu: flushSides takes sh.mu, then p.mu
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.socks[k.slot] != k {
		return
	}
	p.socks[k.slot] = nil
	p.mem.u32(k.off + sState).Store(stFree)
	p.free = append(p.free, k.slot)
	if k.st.Kind != "" {
		if len(p.st.Sockets) < p.s.cfg.MaxSocketRecords {
			p.st.Sockets = append(p.st.Sockets, k.st)
		} else {
			p.st.SocketRecordsDropped++
		}
	}
	p.st.RxBytes += k.st.RxBytes
	p.st.TxBytes += k.st.TxBytes
}

// teardown ends every socket of a process that went away.
func (p *proc) teardown() {
	p.mu.Lock()
	p.tearing = true
	live := make([]*sock, 0)
	for _, k := range p.socks {
		if k != nil {
			live = append(live, k)
		}
	}
	p.mu.Unlock()
	for _, k := range live {
		k.close()
	}
	p.wg.Wait()
	p.mu.Lock()
	p.st.Calls, p.st.Refused = p.callCounts()
	p.st.Exited = true
	p.mem.close()
	p.mu.Unlock()
	_ = p.c.Close()
}
