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

	// writerIdle, when set, is called by a connection's writer after a
	// turn that found nothing to send, before it looks at whether the
	// app closed: specs land a write and a close in that window.
	writerIdle func(slot int)
	// sidesTaken, when set, is called by a shared connection's active
	// writer after it took the other holders' bytes and let their list
	// go, before it sends them: specs end a holder's process there.
	sidesTaken func()
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
	ports     map[uint16]*portUse
	forks     map[uint64]*forkReg
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
	// Forks counts fork registrations (a process about to fork);
	// ForkChildren the children that claimed one, ForksExpired those
	// never claimed (the child died or exec'd first), ForkUnknown
	// hellos naming a registration that is not there; Inherited the
	// listeners children took over.
	Forks        uint64 `json:"forks,omitempty"`
	ForkChildren uint64 `json:"fork_children,omitempty"`
	ForksExpired uint64 `json:"forks_expired,omitempty"`
	ForkUnknown  uint64 `json:"fork_unknown,omitempty"`
	Inherited    uint64 `json:"inherited,omitempty"`
	// InheritedConns counts connections children took over (a
	// descriptor of a connection open at fork); Handovers the times a
	// shared connection's active holder closed and another process's
	// copy went on with it, HandoverBytes the bytes received and not
	// read that moved along.
	InheritedConns uint64 `json:"inherited_conns,omitempty"`
	Handovers      uint64 `json:"handovers,omitempty"`
	HandoverBytes  uint64 `json:"handover_bytes,omitempty"`
	// ReuseportSpread counts connections a SO_REUSEPORT group's hash
	// assigned; ExclusiveWakes new connections that woke one
	// EPOLLEXCLUSIVE process, ExclusiveSkipped the exclusive processes
	// that were not woken for them.
	ReuseportSpread  uint64 `json:"reuseport_spread,omitempty"`
	ExclusiveWakes   uint64 `json:"exclusive_wakes,omitempty"`
	ExclusiveSkipped uint64 `json:"exclusive_skipped,omitempty"`
	// StatsRequests counts statistics asked for while serving
	// (RequestStats; simrun exec --stack-stats).
	StatsRequests uint64 `json:"stats_requests,omitempty"`
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
	return &Server{cfg: cfg, r: cfg.Runtime, procs: map[*proc]struct{}{}, ports: map[uint16]*portUse{},
		forks: map[uint64]*forkReg{}, ephemeral: 49152}, nil
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
	var b [answerLen]byte
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
	if _, err := readFull(c, b[:answerLen]); err != nil {
		s.badHello(c, unix.EPROTO, "pid %d: hello: %v", pid, err)
		return
	}
	if m, v := binary.LittleEndian.Uint32(b[0:]), binary.LittleEndian.Uint32(b[4:]); m == StatsMagic && v == Version {
		s.serveStats(c)
		return
	} else if m != Magic || v != Version {
		s.badHello(c, unix.EPROTONOSUPPORT, "pid %d: hello magic %#x version %d, want %#x version %d", pid, m, v, Magic, Version)
		return
	}
	if _, err := readFull(c, b[answerLen:]); err != nil {
		s.badHello(c, unix.EPROTO, "pid %d: hello: %v", pid, err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	mem, err := newSharedMem(fmt.Sprintf("savanna-preload-%d", pid), s.cfg.Geometry)
	if err != nil {
		s.badHello(c, unix.ENOMEM, "pid %d: %v", pid, err)
		return
	}
	p := newProc(s, c, pid, mem)
	if tok := binary.LittleEndian.Uint64(b[12:]); tok != 0 {
		// A forked child: its parent's listeners at the same slots,
		// before it hears the answer and looks at them.
		if r := s.claimFork(tok); r != nil {
			p.adoptFork(r)
			s.mu.Lock()
			s.counters.ForkChildren++
			s.mu.Unlock()
		} else {
			s.mu.Lock()
			s.counters.ForkUnknown++
			s.mu.Unlock()
		}
	}
	var a [answerLen]byte
	binary.LittleEndian.PutUint32(a[0:], Magic)
	binary.LittleEndian.PutUint32(a[4:], Version)
	if _, _, err := c.WriteMsgUnix(a[:], unix.UnixRights(mem.fd, mem.toStack, mem.toApp), nil); err != nil {
		p.teardown()
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

// portUse is who holds a port: sockets bound to it and listeners on it,
// and the stack's listeners there (one group per set of families).
type portUse struct {
	users map[any]portUser
	grps  []*portGroup
}

// A portUser is one holder of a port: whether it asked SO_REUSEPORT and
// which families it takes.
type portUser struct {
	reuse bool
	takes uint8
}

// conflicts reports whether a new holder taking takes (reuse: with
// SO_REUSEPORT) clashes with one already there: both take a family and
// not both set SO_REUSEPORT (Linux's sk_reuseport rule in
// inet_csk_bind_conflict; an IPv4 socket and a V6ONLY one share a port).
func (u *portUse) conflicts(reuse bool, takes uint8) bool {
	for _, h := range u.users {
		if h.takes&takes != 0 && (!reuse || !h.reuse) {
			return true
		}
	}
	return false
}

// group is the port's stack listener for takes, nil when there is none.
func (u *portUse) group(takes uint8) *portGroup {
	for _, g := range u.grps {
		if g.takes == takes {
			return g
		}
	}
	return nil
}

// bindPort reserves port for owner (0: an ephemeral one, from 49152 as
// Linux's ip_local_port_range default ends at 60999) for the families in
// takes; a port already held for one of them is EADDRINUSE unless every
// such holder and this one set SO_REUSEPORT.
func (s *Server) bindPort(owner any, port uint16, reuse bool, takes uint8) (uint16, unix.Errno) {
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
	} else if u, used := s.ports[port]; used && u.conflicts(reuse, takes) {
		return 0, unix.EADDRINUSE
	}
	u := s.ports[port]
	if u == nil {
		u = &portUse{users: map[any]portUser{}}
		s.ports[port] = u
	}
	u.users[owner] = portUser{reuse: reuse, takes: takes}
	return port, 0
}

func (s *Server) releasePort(owner any, port uint16) {
	s.mu.Lock()
	s.releasePortLocked(owner, port)
	s.mu.Unlock()
}

func (s *Server) releasePortLocked(owner any, port uint16) {
	u := s.ports[port]
	if u == nil {
		return
	}
	delete(u.users, owner)
	if len(u.users) == 0 && len(u.grps) == 0 {
		delete(s.ports, port)
	}
}

// listenOn makes k (bound to port) a listener: the port's first starts
// the stack's listener, a later SO_REUSEPORT one joins its group. k's
// reservation of the port passes to the listener.
func (s *Server) listenOn(k *sock, backlog int) (*listener, unix.Errno) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.ports[k.port]
	if u == nil {
		return nil, unix.EINVAL
	}
	me := u.users[k]
	g := u.group(k.takes)
	if g == nil {
		for _, o := range u.grps {
			if o.takes&k.takes != 0 {
				return nil, unix.EADDRINUSE // a reuseport group of other families
			}
		}
		network, address := k.listenAddress()
		ln, err := gonet.ListenConfig{Backlog: backlog, Options: s.cfg.Conn}.Listen(s.r, network, address)
		if err != nil {
			return nil, errnoOf(err)
		}
		g = &portGroup{s: s, port: k.port, takes: k.takes, reuse: me.reuse, ln: ln}
		u.grps = append(u.grps, g)
		s.wg.Add(1)
		go g.acceptLoop()
	} else if !me.reuse || !g.reuse {
		return nil, unix.EADDRINUSE
	}
	l := &listener{s: s, g: g, port: k.port, addr: k.addr, fam: k.fam, takes: k.takes, v6only: k.v6only,
		acc: make(chan *gonet.Conn, backlog), done: make(chan struct{})}
	g.lst = append(g.lst, l)
	delete(u.users, k)
	u.users[l] = me
	return l, 0
}

// leaveGroup takes a closed listener out of its port's group; the last
// one out closes the stack's listener and frees the port.
func (s *Server) leaveGroup(l *listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := l.g
	for i, m := range g.lst {
		if m == l {
			g.lst = append(g.lst[:i], g.lst[i+1:]...)
			break
		}
	}
	u := s.ports[l.port]
	if len(g.lst) == 0 {
		_ = g.ln.Close()
		if u != nil {
			for i, o := range u.grps {
				if o == g {
					u.grps = append(u.grps[:i], u.grps[i+1:]...)
					break
				}
			}
		}
	}
	if u != nil {
		s.releasePortLocked(l, l.port)
	}
}

// FormatStats writes st as text: one line per process, one per socket.
func FormatStats(st Stats) string {
	var b strings.Builder
	c := st.Server
	fmt.Fprintf(&b, "preload: connections=%d processes=%d bad_hellos=%d", c.Connections, c.Processes, c.BadHellos)
	if c.ReuseportSpread != 0 || c.ExclusiveWakes != 0 || c.ExclusiveSkipped != 0 {
		fmt.Fprintf(&b, " reuseport_spread=%d exclusive_wakes=%d exclusive_skipped=%d", c.ReuseportSpread, c.ExclusiveWakes, c.ExclusiveSkipped)
	}
	if c.ForkUnknown != 0 {
		fmt.Fprintf(&b, " fork_unknown=%d", c.ForkUnknown)
	}
	if c.StatsRequests != 0 {
		fmt.Fprintf(&b, " stats_requests=%d", c.StatsRequests)
	}
	if c.Forks != 0 {
		fmt.Fprintf(&b, " forks=%d fork_children=%d forks_expired=%d inherited=%d inherited_conns=%d handovers=%d handover_bytes=%d",
			c.Forks, c.ForkChildren, c.ForksExpired, c.Inherited, c.InheritedConns, c.Handovers, c.HandoverBytes)
	}
	b.WriteString("\n")
	for _, p := range st.Processes {
		b.WriteString(p.line())
		for _, k := range p.Sockets {
			b.WriteString(k.line(p.PID))
		}
	}
	return b.String()
}
