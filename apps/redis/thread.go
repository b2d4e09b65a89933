package redis

import (
	"errors"
	"io"
	"time"

	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
)

// ThreadServer is Redis as it runs: one event loop on one thread
// (Redis 6's main thread; io-threads are not modelled) that serves every
// connection of the host, on a core that is not a stack lcore. Its
// sockets are the stack threads' (Gazelle's asymmetric model: the
// connections cross lstack's rings to the stack lcores; on a kernel host
// they are system calls), and it waits on one epoll for all of them.
//
// A turn is one pass of ae.c's aeProcessEvents: one epoll_wait
// (aeApiPoll), then for each ready client one read
// (networking.c readQueryFromClient, a read of up to PROTO_IOBUF_LEN,
// 16 KiB) and the commands it completed (processInputBuffer, call), each
// reply appended to the client's buffer and the client put on
// clients_pending_write; before the next wait, beforeSleep's
// handleClientsWithPendingWrites writes each pending client's replies
// with one write (writeToClient). A reply the socket did not take is
// kept and written on a later turn (Redis installs a write handler).
type ThreadServer struct {
	ep      *lstack.Epoll
	store   *resp.Store
	wake    func(at time.Duration)
	ready   []*lstack.Socket
	fresh   []*lstack.Socket
	conns   map[*lstack.Socket]*threadConn
	pending []*threadConn
	args    [][]byte
	buf     []byte
	open    int
	stats   ServerStats
	// turns counts the event loop's passes (aeProcessEvents calls that
	// did work), for a spec that checks one thread serves all.
	turns uint64
}

type threadConn struct {
	s       *lstack.Socket
	in, out []byte
	queued  bool // on pending (clients_pending_write)
	closed  bool
}

// readLen is the most a read takes at once: Redis's PROTO_IOBUF_LEN
// (server.h), the read size of readQueryFromClient.
const readLen = 16 << 10

// NewThreadServer returns the server on ep, whose bridges' Listen hands
// it their connections (ep.Accepted); wake is its thread's core doorbell.
func NewThreadServer(ep *lstack.Epoll, store *resp.Store, wake func(at time.Duration)) *ThreadServer {
	return &ThreadServer{ep: ep, store: store, wake: wake, conns: map[*lstack.Socket]*threadConn{}, buf: make([]byte, readLen)}
}

// Stats returns the counters.
func (t *ThreadServer) Stats() ServerStats {
	st := t.stats
	st.Open = t.open
	return st
}

// ResetStats zeroes the counters (the end of a warm-up).
func (t *ThreadServer) ResetStats() {
	t.stats = ServerStats{}
	t.ep.ResetStats()
}

// Epoll returns the thread's epoll (its counters).
func (t *ThreadServer) Epoll() *lstack.Epoll { return t.ep }

// Turns is the event loop's passes that did work.
func (t *ThreadServer) Turns() uint64 { return t.turns }

// Poll runs one pass of the event loop.
func (t *ThreadServer) Poll(m hw.Meter) (bool, time.Duration) {
	worked := false
	t.fresh = t.ep.Accept(m, t.fresh[:0])
	for _, s := range t.fresh {
		t.conns[s] = &threadConn{s: s}
		t.open++
		t.stats.Accepted++
		worked = true
		// A connection's first bytes may have reached the socket
		// before the thread took it.
		if s.Readable() {
			t.ep.Requeue(s)
		}
	}
	t.ready = t.ep.Wait(m, t.ready[:0], len(t.pending) > 0, t.wake)
	for _, s := range t.ready {
		if c := t.conns[s]; c != nil && !c.closed {
			t.read(m, c)
			worked = true
		}
	}
	if t.writePending(m) {
		worked = true
	}
	if worked {
		t.turns++
	}
	if len(t.pending) > 0 {
		// Replies the send rings did not take: retry soon, as the
		// write handler would when the socket becomes writable.
		return worked, m.Now() + retryWrite
	}
	return worked, hw.NoDeadline
}

// retryWrite is how soon a thread with replies left retries them; the
// model's stand-in for the writable event of a socket whose send ring
// was full (rare: a reply is a few bytes).
const retryWrite = 10 * time.Microsecond

// read is readQueryFromClient and processInputBuffer for one ready
// client.
func (t *ThreadServer) read(m hw.Meter, c *threadConn) {
	n, err := c.s.Read(m, t.buf)
	switch {
	case errors.Is(err, io.EOF) && len(c.in) == 0, err != nil && !errors.Is(err, io.EOF):
		t.drop(m, c)
		return
	case n == 0:
		return
	}
	c.in = append(c.in, t.buf[:n]...)
	if n == len(t.buf) {
		t.ep.Requeue(c.s) // more than one read's worth: level-triggered
	}
	before := len(c.out)
	c.in, c.out, t.args = runCommands(m, t.store, &t.stats, c.in, c.out, t.args)
	if len(c.out) > before && !c.queued {
		c.queued = true
		t.pending = append(t.pending, c)
	}
}

// writePending is handleClientsWithPendingWrites: one write per client
// with replies. It reports whether it wrote any.
func (t *ThreadServer) writePending(m hw.Meter) bool {
	if len(t.pending) == 0 {
		return false
	}
	keep := t.pending[:0]
	wrote := false
	for _, c := range t.pending {
		if c.closed {
			continue
		}
		n, err := c.s.Write(m, c.out)
		switch {
		case err != nil && !errors.Is(err, lstack.ErrRingFull):
			c.queued = false
			t.drop(m, c)
			continue
		case n > 0:
			wrote = true
		}
		c.out = append(c.out[:0], c.out[n:]...)
		if len(c.out) > 0 {
			keep = append(keep, c)
			continue
		}
		c.queued = false
	}
	clear(t.pending[len(keep):])
	t.pending = keep
	return wrote
}

func (t *ThreadServer) drop(m hw.Meter, c *threadConn) {
	c.s.Close(m)
	c.closed = true
	delete(t.conns, c.s)
	t.open--
	t.stats.Closed++
}
