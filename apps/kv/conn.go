package kv

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"github.com/savanna-sim/savanna/apps/resp"
)

// Replies the server sends for its limits, Redis's texts.
const (
	// server.c createSharedObjects, shared.oomerr.
	oomReply = "-OOM command not allowed when used memory > 'maxmemory'.\r\n"
	// networking.c acceptCommonHandler.
	maxClientsReply = "-ERR max number of clients reached\r\n"
)

// flushAt is the pending replies at which the server writes them without
// waiting for the pipeline to drain; keepOut the output buffer kept
// between batches (a larger one, grown for a large reply, is dropped).
// writeChunk is the most one write call takes, so that the deadlines
// of the soft output limit and the idle timeout follow the progress.
const (
	flushAt    = 64 << 10
	keepOut    = 64 << 10
	writeChunk = 256 << 10
)

// refusalWait bounds the write of the maxclients refusal, which Redis
// also makes best effort.
const refusalWait = time.Second

// client is one connection's state. Its account fields are guarded by
// Server.mu; the rest belongs to the connection's goroutine.
type client struct {
	s    *Server
	conn net.Conn
	rd   *Reader
	out  []byte // replies not yet written

	query, output int64 // bytes of each kind of buffer held (s.mu)
	// locked is set while the goroutine holds s.mu, so that the
	// parser's releases under it do not take it again.
	locked bool
	// softSince is when pending replies reached the soft output limit.
	softSince time.Time
}

// admit registers a new client, or refuses it past MaxClients.
func (s *Server) admit(c net.Conn) *client {
	s.mu.Lock()
	if s.open >= s.lim.MaxClients {
		s.stats.MaxClientsRefused++
		s.mu.Unlock()
		_ = c.SetWriteDeadline(time.Now().Add(refusalWait))
		_, _ = io.WriteString(c, maxClientsReply)
		return nil
	}
	s.open++
	cl := &client{s: s, conn: c}
	// The read buffer is part of the connection's allowance.
	cl.add(readBufSize, true)
	s.notePeak()
	s.mu.Unlock()
	cl.rd = newReader(&idleReader{c: c, timeout: s.lim.Timeout}, s.lim, cl, make([]byte, readBufSize))
	return cl
}

// leave gives back everything the client held.
func (cl *client) leave() {
	cl.rd.free()
	s := cl.s
	s.mu.Lock()
	cl.add(-cl.query, true)
	cl.add(-cl.output, false)
	s.open--
	s.mu.Unlock()
	cl.out = nil
}

// idleReader gives every read the idle timeout's deadline, so that a
// read that waits longer fails. Setting a deadline costs a timer, so it
// is moved only when it would come less than timeout after now, to
// timeout and a sixteenth: a client is closed after between timeout and
// 17/16 timeout of silence, never sooner.
type idleReader struct {
	c        net.Conn
	timeout  time.Duration
	deadline time.Time
}

func (r *idleReader) Read(b []byte) (int, error) {
	if r.timeout > 0 {
		if now := time.Now(); r.deadline.Sub(now) < r.timeout {
			r.deadline = now.Add(r.timeout + r.timeout/16)
			_ = r.c.SetReadDeadline(r.deadline)
		}
	}
	return r.c.Read(b)
}

// serve runs the connection's loop: read a command, execute it, and
// write the replies when the pipeline is drained.
func (cl *client) serve() {
	for {
		args, err := cl.rd.ReadCommand()
		if err != nil {
			cl.readFailed(err)
			return
		}
		if len(args) == 0 {
			continue
		}
		quit := bytes.EqualFold(args[0], []byte("QUIT"))
		if !cl.execute(args) {
			return
		}
		if quit || cl.rd.Buffered() == 0 || len(cl.out) >= flushAt {
			if cl.flush() != nil || quit {
				return
			}
		}
	}
}

// readFailed closes the connection after a failed read, counting why.
func (cl *client) readFailed(err error) {
	s := cl.s
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe):
		s.count(func(st *Stats) *uint64 { return &st.ProtocolErrors })
		// Redis's reply to a malformed request (networking.c).
		cl.out = resp.AppendError(cl.out, "ERR Protocol error: "+pe.Msg)
		_ = cl.flush()
	case errors.Is(err, errQueryLimit):
		s.count(func(st *Stats) *uint64 { return &st.QueryBufferLimitClosed })
	case errors.Is(err, errQueryOOM):
		s.count(func(st *Stats) *uint64 { return &st.QueryBufferOOMClosed })
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.count(func(st *Stats) *uint64 { return &st.IdleTimeoutClosed })
	}
}

// execute runs one command under the server's lock, or refuses it
// (-OOM), or closes the client when its reply cannot be held. It
// reports whether the connection goes on.
func (cl *client) execute(args [][]byte) bool {
	s := cl.s
	s.mu.Lock()
	cl.locked = true
	defer func() {
		cl.locked = false
		s.mu.Unlock()
	}()
	s.stats.Commands++
	f := s.store.Footprint(args, resp.BigArg)
	// Redis refuses a DENYOOM command when used memory is over
	// maxmemory (server.c processCommand); here, when running it
	// would take it over, so that the account never passes it.
	oom := f.DenyOOM && s.lim.MaxMemory > 0 && s.used()+f.Alloc > s.lim.MaxMemory
	need := f.Reply
	if oom {
		need = len(oomReply)
	}
	if h := s.lim.OutputBufferHard; h > 0 && int64(len(cl.out)+need) >= h {
		s.stats.OutputBufferLimitClosed++
		return false
	}
	if err := cl.growOut(need); err != nil {
		s.stats.OutputBufferOOMClosed++
		return false
	}
	if oom {
		s.stats.OOMRefused++
		cl.out = append(cl.out, oomReply...)
	} else {
		cl.out = s.store.ExecuteOwned(cl.out, args, resp.BigArg)
	}
	// The store took what it keeps: the command's query buffer goes,
	// in the same critical section, so the account never counts a
	// value twice.
	cl.rd.Release()
	s.notePeak()
	return true
}

// growOut makes room for need more bytes of replies (s.mu held).
func (cl *client) growOut(need int) error {
	if cap(cl.out)-len(cl.out) >= need {
		return nil
	}
	nc := max(len(cl.out)+need, 2*cap(cl.out), 512)
	if err := cl.reserve(int64(nc), false); err != nil {
		return err
	}
	old := cap(cl.out)
	cl.out = append(make([]byte, 0, nc), cl.out...)
	cl.add(-int64(old), false)
	return nil
}

// flush writes the pending replies, with the idle timeout as the
// deadline of each write, and the end of the soft output limit's grace
// while the pending replies are over it.
func (cl *client) flush() error {
	lim := cl.s.lim
	w := 0
	for w < len(cl.out) {
		now := time.Now()
		var deadline time.Time
		if lim.Timeout > 0 {
			deadline = now.Add(lim.Timeout)
		}
		soft := false
		if lim.OutputBufferSoft > 0 && int64(len(cl.out)-w) >= lim.OutputBufferSoft {
			if cl.softSince.IsZero() {
				cl.softSince = now
			}
			if end := cl.softSince.Add(lim.OutputBufferSoftTime); deadline.IsZero() || !deadline.Before(end) {
				deadline, soft = end, true
			}
		} else {
			cl.softSince = time.Time{}
		}
		_ = cl.conn.SetWriteDeadline(deadline)
		n, err := cl.conn.Write(cl.out[w:min(len(cl.out), w+writeChunk)])
		w += n
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if soft {
					cl.s.count(func(st *Stats) *uint64 { return &st.OutputBufferLimitClosed })
				} else {
					cl.s.count(func(st *Stats) *uint64 { return &st.IdleTimeoutClosed })
				}
			}
			return err
		}
	}
	cl.softSince = time.Time{}
	cl.out = cl.out[:0]
	if c := cap(cl.out); c > keepOut {
		cl.release(int64(c), false)
		cl.out = nil
	}
	return nil
}
