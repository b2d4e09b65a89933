package stackproc

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"
)

// StatsMagic opens a request for the statistics instead of a hello
// ("SVST"): on the stack process's Unix socket, a client sends u32
// StatsMagic, u32 Version, u32 0 and reads the statistics as JSON
// (Stats) until the stack closes the connection. simrun exec --stack
// SOCKET --stack-stats is that client.
const StatsMagic = 0x54535653

// serveStats answers a statistics request on c.
func (s *Server) serveStats(c *net.UnixConn) {
	defer func() { _ = c.Close() }()
	s.mu.Lock()
	s.counters.StatsRequests++
	s.mu.Unlock()
	b, err := json.Marshal(s.Stats())
	if err != nil {
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(b)
}

// RequestStats asks the stack process listening at path for its
// statistics now: every process's, those still connected with their
// open sockets.
func RequestStats(path string) (Stats, error) {
	var st Stats
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return st, fmt.Errorf("stackproc: statistics of %s: %w", path, err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var q [answerLen]byte
	binary.LittleEndian.PutUint32(q[0:], StatsMagic)
	binary.LittleEndian.PutUint32(q[4:], Version)
	if _, err := c.Write(q[:]); err != nil {
		return st, fmt.Errorf("stackproc: statistics of %s: %w", path, err)
	}
	b, err := io.ReadAll(c)
	if err != nil {
		return st, fmt.Errorf("stackproc: statistics of %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("stackproc: statistics of %s: %w (a stack process of another version?)", path, err)
	}
	return st, nil
}
