package stackproc

import (
	"slices"

	"github.com/savanna-sim/savanna/stack/gonet"
)

// A side writer serves the send ring of a shared connection's holder
// that is not the active one (a forked child writing on the connection
// its parent still holds, as Linux lets both processes write one socket
// at once): it sends what that process writes, and carries out its
// shutdown(SHUT_WR). gonet.Conn serializes Writes, so the active
// holder's writer and side writers interleave whole chunks, where Linux
// interleaves whole send calls (tcp_sendmsg holds the socket lock);
// each process's bytes stay in order. Reading stays the active holder's
// (shared.go): the receive side has one consumer. When the holder
// becomes the active one, the side writer stops and the holder's writer
// goes on from the same ring; when the holder closes first, the side
// writer sends what is left and frees the slot.

// startSideWriter starts k's side writer on c (once, before k can be
// activated or closed: k is not yet visible to the app).
func (k *sock) startSideWriter(c *gonet.Conn) {
	k.sideStop, k.sideDone = make(chan struct{}), make(chan struct{})
	k.p.wg.Add(1)
	go k.sideWriter(c)
}

// stopSideWriter ends k's side writer (k becomes active, once) and waits
// for it.
func (k *sock) stopSideWriter() {
	if k.sideDone == nil {
		return
	}
	close(k.sideStop)
	<-k.sideDone
}

func (k *sock) sideWriter(c *gonet.Conn) {
	defer k.p.wg.Done()
	stop, done := k.sideStop, k.sideDone
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
		select {
		case <-stop:
			close(done)
			return
		default:
		}
		if sent, err := k.sendOwn(c, failed); err != nil {
			failed = true
			k.fail(err)
			k.p.notify(k.slot)
			continue
		} else if sent {
			continue
		}
		if k.shutReq.Load() && !shut && !failed {
			shut = true
			k.p.mem.u32(k.off + sFlags).Or(fWDone)
			_ = c.CloseWrite()
			k.p.notify(k.slot)
			k.sh.Load().wdone(k)
		}
		if closing() {
			// As the writer's close: bytes written just before the close
			// may have landed after this turn's sendOwn.
			if k.tx.Len() > 0 && !failed {
				continue
			}
			// The holder closed while waiting for its turn (detached):
			// what it wrote is sent, the connection stays with the others.
			// freeSock takes it off the leavers (forget).
			close(done)
			k.p.freeSock(k)
			return
		}
		wait.Store(1)
		if k.tx.Len() > 0 || (k.shutReq.Load() && !shut) {
			wait.Store(0)
			continue
		}
		select {
		case <-k.txKick:
		case <-k.closing:
		case <-stop:
		}
		wait.Store(0)
	}
}

// wdone tells every other holder of the connection that its send side
// is shut (shutdown(SHUT_WR) acts on the socket, not the descriptor: a
// write in any process then fails EPIPE, as Linux's SEND_SHUTDOWN).
// Holders are in sh's lists while their memfds are mapped (a closing
// holder leaves them under sh.mu before its process unmaps).
func (sh *shared) wdone(from *sock) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for _, h := range append([]*sock{sh.active}, sh.others...) {
		if h == nil || h == from {
			continue
		}
		h.p.mem.u32(h.off + sFlags).Or(fWDone)
		h.p.notify(h.slot)
	}
}

// sendOwn sends one chunk of what k's process wrote (discarding it after
// a failure); false when its ring was empty.
func (k *sock) sendOwn(c *gonet.Conn, failed bool) (bool, error) {
	k.txMu.Lock()
	defer k.txMu.Unlock()
	b := k.tx.Readable()
	if len(b) == 0 {
		return false, nil
	}
	if failed {
		k.tx.Consume(len(b))
		return true, nil
	}
	n, err := c.Write(b)
	if n > 0 {
		k.tx.Consume(n)
		k.p.mu.Lock()
		k.st.TxBytes += uint64(n)
		k.p.mu.Unlock()
		k.p.notify(k.slot)
	}
	return true, err
}

// flushSides sends, before the active holder's next bytes, what the
// other holders have written so far. Linux puts a write in the socket's
// send queue before the call returns, so a child's write, its exit and
// the parent's write after waitpid reach the peer in that order; here
// each holder's bytes wait in its own ring, and without this the side
// writer and the active writer would race.
func (k *sock) flushSides(c *gonet.Conn) error {
	sh := k.sh.Load()
	if sh == nil {
		return nil
	}
	var buf []byte
	take := func(h *sock) {
		if h == k || h.sideDone == nil {
			return
		}
		h.txMu.Lock()
		n := 0
		for b := h.tx.Readable(); len(b) > 0; b = h.tx.Readable() {
			buf = append(buf, b...)
			h.tx.Consume(len(b))
			n += len(b)
		}
		h.txMu.Unlock()
		if n == 0 {
			return
		}
		// Counted and told while h is still listed: once sh.mu is let
		// go, h's process may leave and unmap its memfd (freeSock takes
		// h off the lists first, under sh.mu).
		h.p.mu.Lock()
		h.st.TxBytes += uint64(n)
		h.p.mu.Unlock()
		h.p.notify(h.slot)
	}
	sh.mu.Lock()
	for _, h := range sh.others {
		take(h)
	}
	for _, h := range sh.leavers {
		take(h)
	}
	sh.mu.Unlock()
	if len(buf) == 0 {
		return nil
	}
	if h := k.p.s.cfg.sidesTaken; h != nil {
		h()
	}
	_, err := c.Write(buf)
	return err
}

// forget takes k off every list of holders as its slot is freed, however
// it got there: the other holders' writers read the listed holders'
// rings, which k's process unmaps once its slots are free. A connection
// nobody holds any more closes, as at detach.
func (sh *shared) forget(k *sock) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.others = slices.DeleteFunc(sh.others, func(o *sock) bool { return o == k })
	sh.leavers = slices.DeleteFunc(sh.leavers, func(o *sock) bool { return o == k })
	if sh.active == nil && len(sh.others) == 0 && len(sh.leavers) == 0 && sh.pending == 0 && !sh.closed {
		sh.closed = true
		go func() { _ = sh.c.Close() }()
	}
}
