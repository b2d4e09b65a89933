package kv

import "errors"

// ConnAllowance is the per-connection constant of the server's memory
// guarantee. A client's first ConnAllowance bytes of buffers (its read
// buffer, the command being parsed, its pending replies) are granted
// even when MaxMemory is reached, so that a PING still gets its PONG;
// beyond them every byte is granted only within MaxMemory. So no
// sequence of bytes from any peer makes the server's account
// (Stats.UsedMemory) exceed MaxMemory + ConnAllowance × open clients.
// The account is of the bytes the server asked for; the Go runtime adds
// about 8 KiB of goroutine stack and a few hundred bytes of connection
// state per client, and garbage not yet collected (see docs/live.md).
const ConnAllowance = 16 << 10

// Why the server refused memory to a client.
var (
	errQueryLimit = errors.New("kv: client-query-buffer-limit reached")
	errQueryOOM   = errors.New("kv: query buffer refused: used memory would exceed maxmemory")
	errOutputOOM  = errors.New("kv: output buffer refused: used memory would exceed maxmemory")
)

// account is the server's memory account; Server.mu guards it.
type account struct {
	query, output int64 // all clients' query and output buffers
	peak          int64
}

// used returns the bytes the server holds (s.mu held).
func (s *Server) used() int64 { return s.store.Memory() + s.acct.query + s.acct.output }

func (s *Server) notePeak() { s.acct.peak = max(s.acct.peak, s.used()) }

// Reserve grants n bytes of query buffer to the client's parser (it is
// the parser's resp.Budget).
func (cl *client) Reserve(n int) error { return cl.reserve(int64(n), true) }

// Release gives back n bytes of query buffer.
func (cl *client) Release(n int) { cl.release(int64(n), true) }

// lock takes the server's lock unless the client's goroutine holds it
// already (while it executes a command, the parser releases under it).
func (cl *client) lock() func() {
	if cl.locked {
		return func() {}
	}
	cl.s.mu.Lock()
	return cl.s.mu.Unlock
}

func (cl *client) reserve(n int64, query bool) error {
	defer cl.lock()()
	s := cl.s
	if query && s.lim.QueryBufferLimit > 0 && cl.query+n > s.lim.QueryBufferLimit {
		return errQueryLimit
	}
	if cl.query+cl.output+n > ConnAllowance && s.lim.MaxMemory > 0 && s.used()+n > s.lim.MaxMemory {
		if query {
			return errQueryOOM
		}
		return errOutputOOM
	}
	cl.add(n, query)
	s.notePeak()
	return nil
}

func (cl *client) release(n int64, query bool) {
	defer cl.lock()()
	cl.add(-n, query)
}

// add moves n bytes into (or, negative, out of) the client's and the
// server's account (s.mu held).
func (cl *client) add(n int64, query bool) {
	if query {
		cl.query += n
		cl.s.acct.query += n
	} else {
		cl.output += n
		cl.s.acct.output += n
	}
}
