// Package echo is the echo server (RFC 862 over TCP) over any
// net.Listener: every byte a client sends comes back; when the client
// half-closes, the rest is sent and the connection closed.
package echo

import (
	"io"
	"net"
	"sync/atomic"

	"github.com/savanna-sim/savanna/internal/netserve"
)

// Stats are the server's counters.
type Stats struct {
	Conns  uint64 `json:"conns"`
	Active int64  `json:"active"`
	Bytes  uint64 `json:"bytes"`
	Errors uint64 `json:"errors"`
}

// Server echoes bytes back.
type Server struct {
	// BufSize is the copy buffer per connection (default 32 KiB).
	BufSize int

	conns  atomic.Uint64
	active atomic.Int64
	bytes  atomic.Uint64
	errs   atomic.Uint64
	lns    netserve.Listeners
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{Conns: s.conns.Load(), Active: s.active.Load(), Bytes: s.bytes.Load(), Errors: s.errs.Load()}
}

// Serve accepts on ln until it is closed (then it returns nil) or fails.
func (s *Server) Serve(ln net.Listener) error {
	return s.lns.Serve(ln, func(c net.Conn) {
		s.conns.Add(1)
		go s.ServeConn(c)
	})
}

// Close closes the listeners given to Serve.
func (s *Server) Close() error {
	s.lns.Close()
	return nil
}

// ServeConn echoes one connection until EOF or an error.
func (s *Server) ServeConn(c net.Conn) {
	s.active.Add(1)
	defer s.active.Add(-1)
	defer c.Close()
	size := s.BufSize
	if size <= 0 {
		size = 32 << 10
	}
	buf := make([]byte, size)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				s.errs.Add(1)
				return
			}
			s.bytes.Add(uint64(n))
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			s.errs.Add(1)
			return
		}
	}
}
