package http

import (
	"errors"
	"fmt"
	"github.com/savanna-sim/savanna/apps/appcost"
	"strconv"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
	"github.com/savanna-sim/savanna/zlibshim"
)

// GzipConfig is the gzip module's configuration (nginx's gzip on,
// gzip_comp_level, gzip_min_length) and the shim's.
type GzipConfig struct {
	Enabled   bool            `yaml:"enabled"`
	Level     int             `yaml:"level"`
	MinLength int             `yaml:"min_length"`
	Shim      zlibshim.Config `yaml:"shim"`
	// EndStreams calls DeflateEnd after each response (default true).
	// false reproduces the seed's hugepage leak: Tengine freed request
	// memory from its pools but never gave the shim's memory back.
	EndStreams *bool `yaml:"end_streams"`
}

// ServerConfig configures a Tengine-shaped server.
type ServerConfig struct {
	Port uint16     `yaml:"port"`
	Gzip GzipConfig `yaml:"gzip"`
	// RequestCPU is the work of everything else Tengine does per request
	// (routing, logging, TLS offload ...), charged to the worker's core.
	RequestCPU time.Duration `yaml:"request_cpu"`
	// DrainTime keeps old workers running, and holding their QAT
	// instance, at least this long after a reload, as they do while long
	// requests (downloads, slow clients) finish; nginx bounds it with
	// worker_shutdown_timeout. Default 0: they exit once idle.
	DrainTime time.Duration `yaml:"drain_time"`
	// Pages are the sizes of the generated pages served, by path
	// /N (N modulo the number of pages).
	Pages []int `yaml:"pages"`
}

// Validate checks the configuration; errors name the key.
func (c *ServerConfig) Validate() error {
	if c.Gzip.Level < 0 || c.Gzip.Level > 9 {
		return fmt.Errorf("gzip.level: %d is outside 1..9", c.Gzip.Level)
	}
	if c.Gzip.MinLength < 0 {
		return fmt.Errorf("gzip.min_length: %d is negative", c.Gzip.MinLength)
	}
	if err := c.Gzip.Shim.Validate(); err != nil {
		return fmt.Errorf("gzip.shim.%w", err)
	}
	if c.DrainTime < 0 {
		return fmt.Errorf("drain_time: %v is negative", c.DrainTime)
	}
	if c.RequestCPU < 0 {
		return fmt.Errorf("request_cpu: %v is negative", c.RequestCPU)
	}
	for i, p := range c.Pages {
		if p <= 0 || p > 16<<20 {
			return fmt.Errorf("pages[%d]: %d is outside 1..16777216", i, p)
		}
	}
	return nil
}

// ProcessFactory makes the zlib shim's process of a new worker on the
// site-th instance: the wiring gives it its accelerator, a process id and
// the core the instance runs on.
type ProcessFactory func(site, worker int, cfg zlibshim.Config) (*zlibshim.Process, error)

// ServerStats are a server's counters over all its workers.
type ServerStats struct {
	Accepted  uint64 `json:"accepted"`
	Requests  uint64 `json:"requests"`
	Responses uint64 `json:"responses_2xx"`
	// Failed are requests answered 500 because compression failed (only
	// under the hardware-only policy: failover never fails a request).
	Failed      uint64 `json:"failed_5xx"`
	BadRequests uint64 `json:"bad_requests"`
	Gzipped     uint64 `json:"gzipped"`
	// BytesIn are the bodies handed to gzip, BytesGzipped what gzip made
	// of them; BytesPlain the bodies sent as they are (shorter than
	// gzip.min_length, or asked for without Accept-Encoding: gzip).
	// BytesOut is every body sent (nginx's $body_bytes_sent):
	// BytesGzipped + BytesPlain.
	BytesIn        uint64 `json:"body_bytes_before_gzip"`
	BytesGzipped   uint64 `json:"body_bytes_after_gzip"`
	BytesPlain     uint64 `json:"body_bytes_plain"`
	BytesOut       uint64 `json:"body_bytes_sent"`
	Workers        int    `json:"workers"`
	OldWorkers     int    `json:"old_workers"`
	Reloads        uint64 `json:"reloads"`
	WorkersExited  uint64 `json:"workers_exited"`
	LeakedStreams  uint64 `json:"leaked_streams"`
	ProcessFailure uint64 `json:"process_failures"`
	// StartsWithoutInstance counts workers that found no free QAT
	// instance when they started (a reload with too few instances).
	StartsWithoutInstance uint64 `json:"starts_without_instance"`
}

// Server is a Tengine-shaped HTTP server: one worker per stack instance.
type Server struct {
	cfg     ServerConfig
	corpus  *Corpus
	newProc ProcessFactory
	sites   []*site
	nextID  int
	stats   ServerStats
	// gone are the shim processes of workers that exited, kept for their
	// final statistics.
	gone []*zlibshim.Process
}

// site is what runs on one stack instance: the current worker, the old
// ones draining after a reload, and the routing of connections to them.
type site struct {
	s       *Server
	in      *lstack.Instance
	set     *lstack.EventSet
	ln      *tcp.Listener
	current *worker
	old     []*worker
	events  []tcp.Event
	// accepted is st.accept as a value made once, for AcceptAll.
	accepted func(*tcp.Conn) any
}

// worker is one Tengine worker process on a site.
type worker struct {
	id int
	// drainUntil is the earliest time an old worker may exit.
	drainUntil time.Duration
	proc       *zlibshim.Process
	conns      int // open connections
	draining   bool
	leaked     []*zlibshim.Deflater
	zbuf       []byte
}

type httpConn struct {
	c   *tcp.Conn
	w   *worker // the worker that accepted it
	in  []byte
	out []byte
	// parser holds the parse state of the request at the start of in,
	// kept while it arrives.
	parser requestParser
	closed bool // dropped: its last events are ignored
}

// NewServer starts a worker on each instance, listening on cfg.Port.
func NewServer(cfg ServerConfig, instances []*lstack.Instance, corpus *Corpus, newProc ProcessFactory) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Port == 0 {
		cfg.Port = 80
	}
	if cfg.Gzip.Level == 0 {
		cfg.Gzip.Level = 1
	}
	if cfg.Gzip.EndStreams == nil {
		t := true
		cfg.Gzip.EndStreams = &t
	}
	s := &Server{cfg: cfg, corpus: corpus, newProc: newProc}
	for i, in := range instances {
		// The site's workers share the listener and an event set of
		// their own: other applications on the instance do not see
		// their events.
		set := in.NewEventSet()
		ln, err := set.Listen(cfg.Port, 4096)
		if err != nil {
			return nil, err
		}
		st := &site{s: s, in: in, set: set, ln: ln}
		st.accepted = st.accept
		w, err := s.startWorker(i)
		if err != nil {
			return nil, err
		}
		st.current = w
		s.sites = append(s.sites, st)
	}
	return s, nil
}

// Sites returns the per-instance pollers, in instance order: the wiring
// attaches each to its instance's core.
func (s *Server) Sites() []interface {
	Poll(m hw.Meter) (bool, time.Duration)
} {
	out := make([]interface {
		Poll(m hw.Meter) (bool, time.Duration)
	}, len(s.sites))
	for i, st := range s.sites {
		out[i] = st
	}
	return out
}

func (s *Server) startWorker(site int) (*worker, error) {
	s.nextID++
	p, err := s.newProc(site, s.nextID, s.cfg.Gzip.Shim)
	if err != nil {
		s.stats.ProcessFailure++
		return nil, fmt.Errorf("http: worker %d: %w", s.nextID, err)
	}
	if s.cfg.Gzip.Enabled {
		// The worker takes its accelerator instance at start, as
		// Tengine's QAT module does in init_process; a failure is counted
		// by the shim and its requests follow the policy.
		if p.Start() != nil {
			s.stats.StartsWithoutInstance++
		}
	}
	return &worker{id: s.nextID, proc: p}, nil
}

// Reload starts a new worker on every site while the old ones drain:
// they take no new connections, close their keep-alive connections once
// idle, and exit when they have none, as nginx's graceful reload does.
// For a while there are twice as many workers, each with its own QAT
// instance (the seed's problem 3).
func (s *Server) Reload(now time.Duration) error {
	s.stats.Reloads++
	for i, st := range s.sites {
		w, err := s.startWorker(i)
		if err != nil {
			return err
		}
		st.current.draining = true
		st.current.drainUntil = now + s.cfg.DrainTime
		st.old = append(st.old, st.current)
		st.current = w
	}
	return nil
}

// Stats returns the counters.
func (s *Server) Stats() ServerStats {
	st := s.stats
	for _, site := range s.sites {
		st.Workers++
		st.OldWorkers += len(site.old)
	}
	return st
}

// ResetStats zeroes every counter (the end of a warm-up): each then
// counts what happened in the measured window, reloads and worker starts
// and exits included (the shim's own statistics keep a worker's start
// failures). Workers and OldWorkers are the state now.
func (s *Server) ResetStats() {
	s.stats = ServerStats{}
	for _, p := range s.Processes() {
		p.ResetStats()
	}
}

// Processes returns the shim processes of current, draining and exited
// workers, for their statistics.
func (s *Server) Processes() []*zlibshim.Process {
	var out []*zlibshim.Process
	for _, st := range s.sites {
		for _, w := range st.old {
			out = append(out, w.proc)
		}
		out = append(out, st.current.proc)
	}
	return append(out, s.gone...)
}

// Poll runs one turn of the site's event loop.
func (st *site) Poll(m hw.Meter) (bool, time.Duration) {
	st.events = st.set.Events(st.events[:0])
	worked := false
	for _, ev := range st.events {
		switch {
		case ev.Listener != nil:
			if st.set.AcceptAll(m, st.ln, st.accepted) > 0 {
				worked = true
			}
		case ev.Conn != nil:
			if hc := ev.Data.(*httpConn); !hc.closed {
				st.serve(m, hc.w, hc, ev.Mask)
				worked = true
			}
		}
	}
	next := st.reap(m.Now())
	st.set.Wait(m, worked)
	return worked, next
}

// accept gives a connection AcceptAll took to the current worker.
func (st *site) accept(c *tcp.Conn) any {
	c.SetNoDelay(true) // nginx's tcp_nodelay on, the default
	st.current.conns++
	st.s.stats.Accepted++
	return &httpConn{c: c, w: st.current}
}

func (st *site) serve(m hw.Meter, w *worker, hc *httpConn, mask tcp.EventMask) {
	if mask&(tcp.EventReadable|tcp.EventHangup|tcp.EventError) != 0 {
		var eof bool
		var err error
		hc.in, eof, err = st.in.ReadAvailable(m, hc.c, hc.in)
		if err != nil || (eof && len(hc.in) == 0) {
			st.drop(m, w, hc)
			return
		}
		if !st.handle(m, w, hc) {
			return
		}
	}
	st.flush(m, w, hc)
	if w.draining && len(hc.in) == 0 && len(hc.out) == 0 {
		st.drop(m, w, hc) // an idle keep-alive connection of an old worker
	}
}

// handle answers every complete request received; false if the
// connection was dropped.
func (st *site) handle(m hw.Meter, w *worker, hc *httpConn) bool {
	s := st.s
	off := 0
	for off < len(hc.in) {
		req, err := hc.parser.parse(hc.in[off:])
		if errors.Is(err, errIncomplete) {
			break
		}
		if err != nil {
			s.stats.BadRequests++
			hc.out = append(hc.out, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"...)
			st.flush(m, w, hc)
			st.drop(m, w, hc)
			return false
		}
		off += req.length
		s.stats.Requests++
		m.Charge(CostRequest, 1)
		m.Charge(appcost.ParseByte, int64(req.length))
		m.Charge(appcost.Nanos, int64(s.cfg.RequestCPU))
		hc.out = st.respond(w, hc.out, req)
	}
	hc.in = consume(hc.in, off, &hc.parser.work)
	return true
}

// consume drops the first off bytes of in, moving the rest to its start.
// Nothing moves while no message was taken, so a message arriving in
// pieces is not copied once per piece. work counts the bytes moved.
func consume(in []byte, off int, work *uint64) []byte {
	if off == 0 {
		return in
	}
	*work += uint64(len(in) - off)
	return append(in[:0], in[off:]...)
}

func (st *site) respond(w *worker, out []byte, req request) []byte {
	s := st.s
	page := s.pageFor(req.path)
	body, encoding := page, ""
	if s.cfg.Gzip.Enabled && req.gzip && len(page) >= s.cfg.Gzip.MinLength {
		z, err := w.gzip(page, s.cfg.Gzip)
		if err != nil {
			s.stats.Failed++
			return append(out, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"...)
		}
		body, encoding = z, "Content-Encoding: gzip\r\n"
		s.stats.Gzipped++
		s.stats.BytesIn += uint64(len(page))
		s.stats.BytesGzipped += uint64(len(body))
	} else {
		s.stats.BytesPlain += uint64(len(body))
	}
	s.stats.Responses++
	s.stats.BytesOut += uint64(len(body))
	out = append(out, "HTTP/1.1 200 OK\r\nServer: Tengine/savanna\r\nContent-Type: text/html\r\n"...)
	out = append(out, encoding...)
	out = append(out, "Content-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\n\r\n"...)
	return append(out, body...)
}

func (s *Server) pageFor(path []byte) []byte {
	n := 0
	for _, c := range path {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return s.corpus.Pages[n%len(s.corpus.Pages)]
}

// gzip compresses body through the worker's shim process.
func (w *worker) gzip(body []byte, cfg GzipConfig) ([]byte, error) {
	d, err := w.proc.NewDeflater(zlibshim.DeflateOptions{Format: zlibshim.FormatGzip, Level: cfg.Level})
	if err != nil {
		return nil, err
	}
	w.zbuf = w.zbuf[:0]
	d.NextIn = body
	for {
		if cap(w.zbuf)-len(w.zbuf) < 4096 {
			w.zbuf = append(w.zbuf, make([]byte, len(body)/2+4096)...)[:len(w.zbuf)]
		}
		d.NextOut = w.zbuf[len(w.zbuf):cap(w.zbuf)]
		room := len(d.NextOut)
		err := d.Deflate(zlibshim.Finish)
		w.zbuf = w.zbuf[:len(w.zbuf)+room-len(d.NextOut)]
		if errors.Is(err, zlibshim.ErrStreamEnd) {
			break
		}
		if err != nil && !errors.Is(err, zlibshim.ErrBuf) {
			_ = d.DeflateEnd()
			return nil, err
		}
	}
	if *cfg.EndStreams {
		if err := d.DeflateEnd(); err != nil {
			return nil, err
		}
	} else {
		w.leaked = append(w.leaked, d)
	}
	return w.zbuf, nil
}

func (st *site) flush(m hw.Meter, w *worker, hc *httpConn) {
	rest, err := st.in.WriteAvailable(m, hc.c, hc.out)
	switch {
	case err != nil:
		st.drop(m, w, hc)
	case len(rest) == 0:
		hc.out = hc.out[:0]
	default:
		hc.out = rest
	}
}

func (st *site) drop(m hw.Meter, w *worker, hc *httpConn) {
	if hc.closed {
		return
	}
	_ = st.in.Close(m, hc.c)
	hc.closed = true
	w.conns--
}

// reap ends old workers that have no connections left and whose drain
// time has passed; it returns when to look again.
func (st *site) reap(now time.Duration) time.Duration {
	next := hw.NoDeadline
	kept := st.old[:0]
	for _, w := range st.old {
		if w.conns > 0 || now < w.drainUntil {
			kept = append(kept, w)
			if now < w.drainUntil {
				next = min(next, w.drainUntil)
			}
			continue
		}
		st.s.stats.LeakedStreams += uint64(len(w.proc.LeakReport()))
		w.proc.Exit()
		st.s.stats.WorkersExited++
		st.s.gone = append(st.s.gone, w.proc)
	}
	st.old = kept
	return next
}
