package kv

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"

	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/internal/netserve"
)

// Stats are the server's counters.
type Stats struct {
	Conns          uint64 `json:"conns"`
	Commands       uint64 `json:"commands"`
	UnknownCmds    uint64 `json:"unknown_commands"`
	ProtocolErrors uint64 `json:"protocol_errors"`
	Keys           int    `json:"keys"`
}

// Server is the key-value server: connections share one resp.Store,
// which executes the commands under a lock. The zero value is not
// usable: use New.
type Server struct {
	lim   Limits
	mu    sync.Mutex
	store *resp.Store
	conns atomic.Uint64
	cmds  atomic.Uint64
	perr  atomic.Uint64

	lns netserve.Listeners
	wg  sync.WaitGroup
}

// New returns an empty server with limits lim.
func New(lim Limits) (*Server, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	return &Server{lim: lim.WithDefaults(), store: resp.NewStore()}, nil
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.store.Stats()
	s.mu.Unlock()
	return Stats{Conns: s.conns.Load(), Commands: s.cmds.Load(), UnknownCmds: st.Unknown,
		ProtocolErrors: s.perr.Load(), Keys: st.Keys}
}

// Serve accepts connections on ln until it fails or is closed, serving
// each on its own goroutine. It returns nil when ln was closed.
func (s *Server) Serve(ln net.Listener) error {
	return s.lns.Serve(ln, func(c net.Conn) {
		s.conns.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.ServeConn(c)
		}()
	})
}

// Close closes the listeners given to Serve.
func (s *Server) Close() error {
	s.lns.Close()
	return nil
}

// ServeConn serves one connection until the client leaves, sends QUIT
// or breaks the protocol.
func (s *Server) ServeConn(c net.Conn) {
	defer c.Close()
	rd := NewReader(bufio.NewReaderSize(c, 16<<10), s.lim)
	w := bufio.NewWriterSize(c, 16<<10)
	var args [][]byte
	var out []byte
	for {
		var err error
		args, err = rd.ReadCommand(args)
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				s.perr.Add(1)
				// Redis's reply to a malformed request (networking.c).
				_, _ = w.Write(resp.AppendError(out[:0], "ERR Protocol error: "+pe.Msg))
			}
			_ = w.Flush()
			return
		}
		if len(args) == 0 {
			continue
		}
		s.cmds.Add(1)
		s.mu.Lock()
		out = s.store.Execute(out[:0], args)
		s.mu.Unlock()
		_, _ = w.Write(out)
		if cap(out) > keepBuf {
			out = nil // do not pin one large reply's memory
		}
		if bytes.EqualFold(args[0], []byte("QUIT")) {
			_ = w.Flush()
			return
		}
		// Pipelining: answer a batch at once, flushing when the client
		// has nothing more in flight.
		if rd.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}
