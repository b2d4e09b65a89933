package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Handler answers one request; its result is sent as the Response's
// Result, its error as the Response's Error.
type Handler func(Request) (any, error)

// Server answers requests on a Unix socket.
type Server struct {
	path     string
	ln       net.Listener
	handlers map[string]Handler
	log      *slog.Logger

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// maxClients bounds the connections served at once; more wait in the
// listen backlog.
const maxClients = 16

// Listen makes the socket at path (and its folder, mode 0700), mode 0600
// so that only the serving user (and root) can control the process, and
// serves requests with handlers, keyed by Request.Cmd, until Close. A
// socket file left at path by a process that is gone is replaced; one a
// live process answers on is an error.
func Listen(path string, handlers map[string]Handler, log *slog.Logger) (*Server, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("control socket %s: another process answers on it", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control socket %s: removing the stale socket: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// Connecting needs write permission, which the umask's usual 022
	// already denies to others; the folder's 0700 guards the moment
	// before this.
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", path, err)
	}
	s := &Server{path: path, ln: ln, handlers: handlers, log: log, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Path returns the socket's path.
func (s *Server) Path() string { return s.path }

func (s *Server) accept() {
	defer s.wg.Done()
	sem := make(chan struct{}, maxClients)
	for {
		sem <- struct{}{}
		c, err := s.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Error("control socket: accept failed", "path", s.path, "err", err)
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-sem }()
			s.serveConn(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			_ = c.Close()
		}()
	}
}

// serveConn answers c's requests in order until it closes or sends a
// line too long to read.
func (s *Server) serveConn(c net.Conn) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 0, 512), maxRequest+1)
	enc := json.NewEncoder(c)
	for sc.Scan() {
		_ = enc.Encode(s.answer(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			_ = enc.Encode(Response{Error: fmt.Sprintf("bad request: line longer than %d bytes", maxRequest)})
			return
		}
		if !errors.Is(err, net.ErrClosed) {
			s.log.Debug("control socket: read failed", "err", err)
		}
	}
}

// answer parses and runs one request line.
func (s *Server) answer(line []byte) Response {
	req, err := ParseRequest(line)
	if err != nil {
		s.log.Debug("control request refused", "err", err)
		return Response{Error: err.Error()}
	}
	h := s.handlers[req.Cmd]
	if h == nil {
		return Response{ID: req.ID, Error: unknownCommand(req.Cmd).Error()}
	}
	s.log.Debug("control request", "cmd", req.Cmd, "id", req.ID)
	res, err := h(req)
	if err != nil {
		return Response{ID: req.ID, Error: err.Error()}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return Response{ID: req.ID, Error: fmt.Sprintf("encoding the answer: %v", err)}
	}
	return Response{ID: req.ID, OK: true, Result: b}
}

// Close stops listening, closes the clients' connections, waits for the
// requests being answered and removes the socket file.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	// net's Unix listener unlinks the file on Close; make sure.
	if rmErr := os.Remove(s.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	return err
}
