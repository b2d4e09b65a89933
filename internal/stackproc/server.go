package stackproc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/internal/unixsock"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/savanna-sim/savanna/stack/gonet"
	"github.com/savanna-sim/savanna/stack/rt"
	"golang.org/x/sys/unix"
)

// Config is a stack process's configuration.
type Config struct {
	// Runtime is the live stack the sockets run on (started).
	Runtime *rt.Runtime
	// Geometry is each process's memfd (zero: DefaultGeometry).
	Geometry Geometry
	// Conn is the ring sizes of the stack's connections (gonet.Options).
	Conn gonet.Options
	// MaxSocketRecords bounds the closed sockets' statistics kept per
	// process (0: 4096); the rest are counted in SocketRecordsDropped.
	MaxSocketRecords int
}

// Server is the stack process's side: a Unix socket that preloaded
// processes connect to, and their sockets on the stack. Its methods are
// safe for concurrent use.
type Server struct {
	cfg Config
	r   *rt.Runtime

	mu        sync.Mutex
	ln        *net.UnixListener
	path      string
	procs     map[*proc]struct{}
	finished  []ProcStats
	ports     map[uint16]*sock
	ephemeral uint16
	closed    bool
	wg        sync.WaitGroup
	counters  ServerCounters
}

// ServerCounters are the server's own counters.
type ServerCounters struct {
	// Connections counts Unix connections; Processes those that said a
	// valid hello; BadHellos the others (LastBadHello says why).
	Connections  uint64 `json:"connections"`
	Processes    uint64 `json:"processes"`
	BadHellos    uint64 `json:"bad_hellos"`
	LastBadHello string `json:"last_bad_hello,omitempty"`
}

// NewServer returns a server for cfg.Runtime.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("stackproc: no runtime")
	}
	if cfg.Geometry == (Geometry{}) {
		cfg.Geometry = DefaultGeometry
	}
	if err := cfg.Geometry.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxSocketRecords <= 0 {
		cfg.MaxSocketRecords = 4096
	}
	return &Server{cfg: cfg, r: cfg.Runtime, procs: map[*proc]struct{}{}, ports: map[uint16]*sock{}, ephemeral: 49152}, nil
}

// Listen binds the Unix socket at path (mode 0666: any local user may run
// a program on the stack, as any may open a TCP socket). A stale socket
// file is removed first; a live one is an error.
func (s *Server) Listen(path string) error {
	ln, err := unixsock.Listen(path, "a stack process")
	if err != nil {
		return fmt.Errorf("stackproc: %w", err)
	}
	_ = os.Chmod(path, 0o666)
	s.mu.Lock()
	s.ln, s.path = ln, path
	s.mu.Unlock()
	return nil
}

// Serve accepts processes until Close, and returns nil after Close.
func (s *Server) Serve() error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return errors.New("stackproc: serve before listen")
	}
	for {
		c, err := unixsock.Accept(ln, s.isClosed)
		if err != nil {
			return fmt.Errorf("stackproc: %w", err)
		}
		if c == nil {
			return nil
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return nil
		}
		s.counters.Connections++
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.hello(c)
		}()
	}
}

// Close stops accepting, ends every process's sockets (as at a crash of
// the process) and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	for p := range s.procs {
		_ = p.c.Close()
	}
	s.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	s.wg.Wait()
	return err
}

func (s *Server) badHello(c *net.UnixConn, errno unix.Errno, format string, a ...any) {
	s.mu.Lock()
	s.counters.BadHellos++
	s.counters.LastBadHello = fmt.Sprintf(format, a...)
	s.mu.Unlock()
	var b [helloLen]byte
	binary.LittleEndian.PutUint32(b[0:], Magic)
	binary.LittleEndian.PutUint32(b[4:], Version)
	binary.LittleEndian.PutUint32(b[8:], uint32(errno))
	_, _ = c.Write(b[:])
	_ = c.Close()
}

// hello reads a process's hello, hands it its memfd and doorbells, and
// serves it until its connection closes.
func (s *Server) hello(c *net.UnixConn) {
	pid, err := unixsock.PeerPID(c)
	if err != nil {
		s.badHello(c, unix.EPERM, "%v", err)
		return
	}
	var b [helloLen]byte
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := readFull(c, b[:]); err != nil {
		s.badHello(c, unix.EPROTO, "pid %d: hello: %v", pid, err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if m, v := binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:]); m != Magic || v != Version {
		s.badHello(c, unix.EPROTONOSUPPORT, "pid %d: hello magic %#x version %d, want %#x version %d", pid, m, v, Magic, Version)
		return
	}
	mem, err := newSharedMem(fmt.Sprintf("savanna-preload-%d", pid), s.cfg.Geometry)
	if err != nil {
		s.badHello(c, unix.ENOMEM, "pid %d: %v", pid, err)
		return
	}
	p := newProc(s, c, pid, mem)
	binary.LittleEndian.PutUint32(b[8:], 0)
	if _, _, err := c.WriteMsgUnix(b[:], unix.UnixRights(mem.fd, mem.toStack, mem.toApp), nil); err != nil {
		mem.close()
		_ = c.Close()
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		mem.close()
		_ = c.Close()
		return
	}
	s.procs[p] = struct{}{}
	s.counters.Processes++
	s.mu.Unlock()
	p.run()
	st := p.stats()
	s.mu.Lock()
	delete(s.procs, p)
	s.finished = append(s.finished, st)
	s.mu.Unlock()
}

func readFull(c *net.UnixConn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// isClosed reports whether Close was called.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Stats are every process's statistics, finished ones first, then those
// still connected, each group by PID.
type Stats struct {
	Server    ServerCounters `json:"server"`
	Processes []ProcStats    `json:"processes"`
}

// Stats returns the statistics now.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	out := Stats{Server: s.counters, Processes: append([]ProcStats(nil), s.finished...)}
	live := make([]*proc, 0, len(s.procs))
	for p := range s.procs {
		live = append(live, p)
	}
	s.mu.Unlock()
	sort.Slice(live, func(i, j int) bool { return live[i].pid < live[j].pid })
	for _, p := range live {
		out.Processes = append(out.Processes, p.stats())
	}
	return out
}

// bindPort reserves port for k (0: an ephemeral one, from 49152 as
// Linux's ip_local_port_range default ends at 60999).
func (s *Server) bindPort(k *sock, port uint16) (uint16, unix.Errno) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if port == 0 {
		for i := 0; i < 16384; i++ {
			s.ephemeral++
			if s.ephemeral < 49152 || s.ephemeral > 60999 {
				s.ephemeral = 49152
			}
			if _, used := s.ports[s.ephemeral]; !used {
				port = s.ephemeral
				break
			}
		}
		if port == 0 {
			return 0, unix.EADDRINUSE
		}
	} else if _, used := s.ports[port]; used {
		return 0, unix.EADDRINUSE
	}
	s.ports[port] = k
	return port, 0
}

func (s *Server) releasePort(k *sock, port uint16) {
	s.mu.Lock()
	if s.ports[port] == k {
		delete(s.ports, port)
	}
	s.mu.Unlock()
}

// FormatStats writes st as text: one line per process, one per socket.
func FormatStats(st Stats) string {
	var b strings.Builder
	c := st.Server
	fmt.Fprintf(&b, "preload: connections=%d processes=%d bad_hellos=%d\n", c.Connections, c.Processes, c.BadHellos)
	for _, p := range st.Processes {
		b.WriteString(p.line())
		for _, k := range p.Sockets {
			b.WriteString(k.line(p.PID))
		}
	}
	return b.String()
}
