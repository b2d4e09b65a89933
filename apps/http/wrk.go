package http

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/savanna-sim/savanna/apps/appcost"
	"github.com/savanna-sim/savanna/apps/latency"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// WrkConfig are wrk's (and wrk2's) knobs.
type WrkConfig struct {
	// Connections is the number of keep-alive connections (-c),
	// default 10.
	Connections int `yaml:"connections"`
	// Rate, when set, is the total requests per second (wrk2's -R): each
	// connection sends on a fixed schedule and latency is measured from
	// when a request should have been sent (coordinated omission).
	// Zero is wrk's closed loop.
	Rate float64 `yaml:"rate"`
	// Paths are requested in turn, default "/0".
	Paths []string `yaml:"paths"`
	// Gzip sends Accept-Encoding: gzip (default true).
	Gzip *bool `yaml:"gzip"`
}

// Validate checks the configuration; errors name the key.
func (c *WrkConfig) Validate() error {
	switch {
	case c.Connections < 0 || c.Connections > 100000:
		return fmt.Errorf("connections: %d is outside 1..100000", c.Connections)
	case c.Rate < 0:
		return fmt.Errorf("rate: %v is negative", c.Rate)
	}
	return nil
}

// WrkStats are wrk's report.
type WrkStats struct {
	Requests        uint64  `json:"requests"`
	RPS             float64 `json:"rps"`
	Status2xx       uint64  `json:"status_2xx"`
	Status5xx       uint64  `json:"status_5xx"`
	OtherStatus     uint64  `json:"status_other"`
	SocketErrors    uint64  `json:"socket_errors"`
	Reconnects      uint64  `json:"reconnects"`
	BytesRead       uint64  `json:"bytes_read"`
	ConnectFailures uint64  `json:"connect_failures"`
	// Outstanding are the requests sent and not answered at the time of
	// the report; Lost those whose connection failed or closed before
	// their response came.
	Outstanding uint64          `json:"outstanding"`
	Lost        uint64          `json:"lost"`
	Latency     latency.Summary `json:"latency"`
}

// Wrk is a load generator on one stack instance.
type Wrk struct {
	cfg      WrkConfig
	in       *lstack.Instance
	set      *lstack.EventSet
	remote   tcp.Addr
	port     func(i int) uint16
	interval time.Duration

	conns   []*wrkConn
	dead    int // connections replaced this turn, still in conns
	events  []tcp.Event
	lat     *latency.Recorder
	stats   WrkStats
	since   time.Duration
	started bool
	nextReq int
	// sending says a request was ever sent, firstSend when.
	sending   bool
	firstSend time.Duration
}

type wrkConn struct {
	i       int
	c       *tcp.Conn
	open    bool
	busy    bool
	closed  bool          // replaced: its last events are ignored
	sentAt  time.Duration // when the request in flight was (or should have been) sent
	next    time.Duration // open loop: when the next request is due
	in, out []byte
	// parser holds the parse state of the response at the start of in,
	// kept while it arrives.
	parser responseParser
}

// NewWrk returns a generator on in against remote; port picks local ports
// as for redis.NewBenchmark.
func NewWrk(cfg WrkConfig, in *lstack.Instance, remote tcp.Addr, port func(i int) uint16) (*Wrk, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Connections == 0 {
		cfg.Connections = 10
	}
	if len(cfg.Paths) == 0 {
		cfg.Paths = []string{"/0"}
	}
	if cfg.Gzip == nil {
		t := true
		cfg.Gzip = &t
	}
	w := &Wrk{cfg: cfg, in: in, set: in.NewEventSet(), remote: remote, port: port, lat: latency.New()}
	if cfg.Rate > 0 {
		w.interval = time.Duration(float64(cfg.Connections) / cfg.Rate * 1e9)
	}
	return w, nil
}

// ResetStats starts a measurement window at now. Requests in flight go
// on: their responses count in the new window.
func (w *Wrk) ResetStats(now time.Duration) {
	w.stats = WrkStats{}
	w.lat.Reset()
	w.since = now
}

// Stats returns the figures over the window ending at now.
func (w *Wrk) Stats(now time.Duration) WrkStats {
	s := w.stats
	if d := (now - w.since).Seconds(); d > 0 {
		s.RPS = float64(s.Requests) / d
	}
	s.Latency = w.lat.Summary()
	for _, wc := range w.conns {
		if wc.busy && !wc.closed {
			s.Outstanding++
		}
	}
	return s
}

// Active returns when the generator started sending in the current
// window: the window's start if it was sending already, and false if it
// has sent nothing. wrk runs to the end of the run.
func (w *Wrk) Active() (start time.Duration, ok bool) {
	return max(w.firstSend, w.since), w.sending
}

// Requests returns the responses received in the window, as Stats does,
// without the latency summary (the rig samples it as the run goes).
func (w *Wrk) Requests() uint64 { return w.stats.Requests }

// Latency returns the recorder, for plots.
func (w *Wrk) Latency() *latency.Recorder { return w.lat }

// Poll runs one turn of the generator.
func (w *Wrk) Poll(m hw.Meter) (bool, time.Duration) {
	now := m.Now()
	if !w.started {
		w.started = true
		for i := 0; i < w.cfg.Connections; i++ {
			w.dial(m, i)
		}
		return true, hw.NoDeadline
	}
	w.events = w.set.Events(w.events[:0])
	worked := false
	for _, ev := range w.events {
		wc := ev.Data.(*wrkConn)
		if wc.closed {
			continue
		}
		worked = true
		if ev.Mask&tcp.EventError != 0 {
			w.stats.SocketErrors++
			w.redial(m, wc)
			continue
		}
		if !wc.open && ev.Conn.Connected() {
			wc.open = true
			// Open loop: the connections' schedules are spread evenly
			// over one interval, so the server sees the rate as a steady
			// stream rather than every connection firing at once (in a
			// simulation all connect in the same instant; on a real
			// machine connect times and jitter spread them).
			wc.next = now + w.interval*time.Duration(wc.i)/time.Duration(w.cfg.Connections)
		}
		if ev.Mask&(tcp.EventReadable|tcp.EventHangup) != 0 {
			w.receive(m, wc)
		}
		if ev.Mask&tcp.EventWritable != 0 && !wc.closed {
			w.flush(m, wc)
		}
	}
	next := hw.NoDeadline
	for _, wc := range w.conns {
		if !wc.open || wc.busy || wc.closed {
			continue
		}
		if w.interval == 0 || wc.next <= now {
			w.send(m, wc)
			worked = true
		} else {
			next = min(next, wc.next)
		}
	}
	if w.dead > 0 {
		w.conns = slices.DeleteFunc(w.conns, func(wc *wrkConn) bool { return wc.closed })
		w.dead = 0
	}
	w.set.Wait(m, worked)
	return worked, next
}

func (w *Wrk) dial(m hw.Meter, i int) {
	var lp uint16
	if w.port != nil {
		lp = w.port(w.nextReq + i)
	}
	wc := &wrkConn{i: i}
	c, err := w.set.Connect(m, lp, w.remote, wc)
	if err != nil {
		w.stats.ConnectFailures++
		return
	}
	c.SetNoDelay(true) // wrk sets TCP_NODELAY
	wc.c = c
	w.conns = append(w.conns, wc)
}

// redial replaces a connection that failed or that the server closed,
// as wrk reconnects.
func (w *Wrk) redial(m hw.Meter, wc *wrkConn) {
	if wc.closed {
		return
	}
	if wc.busy {
		w.stats.Lost++
	}
	wc.closed = true
	w.dead++ // taken out of conns at the end of the turn
	_ = w.in.Close(m, wc.c)
	w.stats.Reconnects++
	w.nextReq += w.cfg.Connections
	w.dial(m, wc.i)
}

// wrkEpollCtls is the epoll_ctl calls wrk makes per request (see send).
const wrkEpollCtls = 2

func (w *Wrk) send(m hw.Meter, wc *wrkConn) {
	path := w.cfg.Paths[w.nextReq%len(w.cfg.Paths)]
	w.nextReq++
	wc.out = append(wc.out, "GET "...)
	wc.out = append(wc.out, path...)
	wc.out = append(wc.out, " HTTP/1.1\r\nHost: savanna\r\nUser-Agent: wrk\r\n"...)
	if *w.cfg.Gzip {
		wc.out = append(wc.out, "Accept-Encoding: gzip\r\n"...)
	}
	wc.out = append(wc.out, "\r\n"...)
	m.Charge(CostWrkRequest, 1)
	// wrk.c turns writable notification on for the request
	// (response_complete's aeCreateFileEvent) and off once it is written
	// (socket_writeable's aeDeleteFileEvent): an epoll_ctl each.
	w.set.Control(m, wrkEpollCtls)
	wc.busy = true
	wc.sentAt = m.Now()
	if !w.sending {
		w.sending, w.firstSend = true, wc.sentAt
	}
	if w.interval > 0 {
		// wrk2: latency counts from when the request was due.
		wc.sentAt = min(wc.sentAt, wc.next)
		wc.next += w.interval
	}
	w.flush(m, wc)
}

func (w *Wrk) flush(m hw.Meter, wc *wrkConn) {
	rest, err := w.in.WriteAvailable(m, wc.c, wc.out)
	switch {
	case err != nil:
		w.stats.SocketErrors++
		w.redial(m, wc)
	case len(rest) == 0:
		wc.out = wc.out[:0]
	default:
		wc.out = rest
	}
}

func (w *Wrk) receive(m hw.Meter, wc *wrkConn) {
	var eof bool
	var err error
	if wc.in, eof, err = w.in.ReadAvailable(m, wc.c, wc.in); err != nil {
		w.stats.SocketErrors++
		w.redial(m, wc)
		return
	}
	if !w.consume(m, wc) {
		return
	}
	if eof {
		w.redial(m, wc) // the server closed the keep-alive connection
	}
}

// consume takes the responses received on wc; false if the connection
// was replaced because one was malformed.
func (w *Wrk) consume(m hw.Meter, wc *wrkConn) bool {
	off := 0
	for wc.busy {
		r, err := wc.parser.parse(wc.in[off:])
		if errors.Is(err, errIncomplete) {
			break
		}
		if err != nil {
			w.stats.SocketErrors++
			w.redial(m, wc)
			return false
		}
		off += r.length
		// wrk's http_parser scans the response; response_complete
		// records it.
		m.Charge(appcost.ParseByte, int64(r.length))
		m.Charge(CostWrkResponse, 1)
		wc.busy = false
		w.stats.Requests++
		w.stats.BytesRead += uint64(r.length)
		switch {
		case r.status >= 200 && r.status < 300:
			w.stats.Status2xx++
		case r.status >= 500:
			w.stats.Status5xx++
		default:
			w.stats.OtherStatus++
		}
		w.lat.Record(m.Now() - wc.sentAt)
	}
	wc.in = consume(wc.in, off, &wc.parser.work)
	return true
}
