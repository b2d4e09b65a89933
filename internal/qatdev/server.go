package qatdev

import (
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/internal/unixsock"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim/qat"
)

// Config is a device process's configuration.
type Config struct {
	// QAT is the model's configuration: the devices, their instances,
	// drivers, completion modes and USDM limits.
	QAT qat.Config
	// MemSize is the size of each process's memfd; 0 means twice what
	// USDM lets one process hold (max_huge_pages_per_process x 2 MiB of
	// the first device's node), so the memfd is never the tighter limit.
	// The memfd is sparse: only written pages take memory.
	MemSize int64
}

// Server is the device process: the QAT model in real time, served to
// processes over a Unix socket. Its methods are safe for concurrent use;
// one lock serialises every request on the model, which is not
// concurrent (as the device's rings are served in order).
type Server struct {
	mu      sync.Mutex
	svc     *qat.Service
	start   time.Time
	memSize int64
	mode    qat.CompletionMode

	ln     *net.UnixListener
	path   string
	conns  map[*conn]struct{}
	byPID  map[int]*conn
	closed bool
	wg     sync.WaitGroup

	counters ServerCounters
	insts    map[instKey]*work
	procs    map[int]*work
	pidSeen  []int // PIDs in order of first hello
}

// NewServer builds the model. cfg.QAT must have at least one device.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.QAT.Devices) == 0 {
		return nil, errors.New("qatdev: no QAT device configured")
	}
	s := &Server{start: time.Now(), conns: map[*conn]struct{}{}, byPID: map[int]*conn{},
		insts: map[instKey]*work{}, procs: map[int]*work{}}
	// Real time: the model's clock for processes it has no meter for
	// (all of them here) is the wall clock since the server started, so
	// a request completes when its modelled service time has passed.
	svc, err := qat.NewService(cfg.QAT, qat.Options{Clock: s.now})
	if err != nil {
		return nil, fmt.Errorf("qatdev: %w", err)
	}
	s.svc = svc
	s.mode = cfg.QAT.Devices[0].Completion
	if s.mode == "" {
		s.mode = qat.Polling
	}
	s.memSize = cfg.MemSize
	if s.memSize <= 0 {
		per := cfg.QAT.Devices[0].USDM.MaxHugePagesPerProcess
		if per <= 0 {
			per = 48 // usdm_drv's max_huge_pages_per_process default, as the model's
		}
		s.memSize = 2 * int64(per) * int64(hw.Hugepage2M)
	}
	return s, nil
}

// now is the wall time since the server started.
func (s *Server) now() time.Duration { return time.Since(s.start) }

// Service is the model. While the server serves, only the devices'
// fixed properties (Name, Model, Driver, Instances) may be read: the
// model is not safe for concurrent use and the server's lock guards it.
func (s *Server) Service() *qat.Service { return s.svc }

// Listen binds the socket at path. A stale socket file (nothing accepts
// on it) is removed first; a live one is an error.
func (s *Server) Listen(path string) error {
	ln, err := unixsock.Listen(path, "a device process")
	if err != nil {
		return fmt.Errorf("qatdev: %w", err)
	}
	s.mu.Lock()
	s.ln, s.path = ln, path
	s.mu.Unlock()
	return nil
}

// Serve accepts connections until Close. It returns nil after Close.
func (s *Server) Serve() error {
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	if ln == nil {
		return errors.New("qatdev: serve before listen")
	}
	for {
		c, err := unixsock.Accept(ln, s.isClosed)
		if err != nil {
			return fmt.Errorf("qatdev: %w", err)
		}
		if c == nil {
			return nil
		}
		pid, err := unixsock.PeerPID(c)
		if err != nil {
			_ = c.Close()
			continue
		}
		cn := &conn{s: s, c: c, pid: pid, bufs: map[uint64]*srvBuf{}, insts: map[instKey]*qat.Instance{}}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = c.Close()
			return nil
		}
		s.conns[cn] = struct{}{}
		s.counters.Connections++
		s.wg.Add(1)
		s.mu.Unlock()
		go cn.serve()
	}
}

// Close stops accepting, closes every connection (their processes'
// resources are taken back as at a crash) and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	ln := s.ln
	for c := range s.conns {
		_ = c.c.Close()
	}
	s.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	s.wg.Wait()
	return err
}

// isClosed reports whether Close was called.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Telemetry returns the statistics now.
func (s *Server) Telemetry() Telemetry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.telemetryLocked()
}

func (s *Server) telemetryLocked() Telemetry {
	t := Telemetry{Uptime: s.now(), Server: s.counters, Model: s.svc.Stats()}
	t.Server.Active = len(s.byPID)
	for _, d := range s.svc.Devices() {
		vfs := d.DeviceStats().VFs
		for qp := 0; qp < d.Instances(); qp++ {
			k := instKey{d.Name(), qp}
			it := InstanceTelemetry{Device: d.Name(), QP: qp, Name: instName(d.Name(), vfs, qp)}
			if w := s.insts[k]; w != nil {
				it.Requests, it.BytesIn, it.BytesOut, it.Errors, it.Busy = w.requests, w.bytesIn, w.bytesOut, w.errors, w.busy
			}
			for c := range s.conns {
				if c.insts[k] != nil {
					it.PID = c.pid
				}
			}
			t.Instances = append(t.Instances, it)
		}
	}
	model := map[int]qat.ProcessStats{}
	for _, p := range t.Model.Processes {
		model[p.PID] = p
	}
	pids := append([]int(nil), s.pidSeen...)
	sort.Ints(pids)
	for _, pid := range pids {
		w := s.procs[pid]
		m := model[pid]
		pt := ProcessTelemetry{PID: pid, Instances: m.Instances,
			AttachFailures: m.AttachFailures, AllocFailures: m.AllocFailures, Leaked: m.Leaked}
		// What it holds is the server's own record (emptied at exit): the
		// model's ProcessStats keep the buffer figures of a process after
		// its Exit, when they are counted as leaked.
		if c := s.byPID[pid]; c != nil {
			pt.Connected = true
			for _, b := range c.bufs {
				pt.PinnedBuffers++
				pt.PinnedBytes += uint64(b.n)
			}
		}
		if w != nil {
			pt.Requests, pt.BytesIn, pt.BytesOut, pt.Errors = w.requests, w.bytesIn, w.bytesOut, w.errors
		}
		t.Processes = append(t.Processes, pt)
	}
	return t
}

// instName is the model's name of a device's queue pair.
func instName(dev string, vfs, qp int) string {
	if vfs > 0 {
		return fmt.Sprintf("%s/vf%d/inst%d", dev, qp%vfs, qp)
	}
	return fmt.Sprintf("%s/inst%d", dev, qp)
}

// device finds a device by name; "" is the first.
func (s *Server) device(name string) (*qat.Device, error) {
	if name == "" {
		return s.svc.Devices()[0], nil
	}
	d, err := s.svc.Device(name)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// workOf returns the counters of an instance and of a process.
func (s *Server) workOf(k instKey, pid int) (*work, *work) {
	wi := s.insts[k]
	if wi == nil {
		wi = &work{}
		s.insts[k] = wi
	}
	wp := s.procs[pid]
	if wp == nil {
		wp = &work{}
		s.procs[pid] = wp
	}
	return wi, wp
}
