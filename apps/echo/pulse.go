package echo

import (
	"fmt"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// PulseConfig configures a Pulse: many connections, opened at a bounded
// rate, each sending a small request now and then and reading its echo,
// the shape of a fleet of mostly idle clients (IoT devices, chat or push
// clients holding a connection open).
type PulseConfig struct {
	// Connections is the number of connections, one per simulated
	// device (at most 1,048,576). Its key is devices, not connections:
	// wrk's connections key is bounded by one source port each, and a
	// Pulse spreads its connections over several server ports.
	Connections int `yaml:"devices"`
	// Ports is how many consecutive server ports, from the target's,
	// the connections are spread over (connection k goes to port
	// target+k%ports), so that one client address can hold more than
	// the 64,511 connections one server port gives it. Default 1.
	Ports int `yaml:"ports"`
	// OpenRate is connections opened per second of virtual time
	// (default 100,000): a SYN storm of a million at once would overflow
	// the server's SYN queue.
	OpenRate float64 `yaml:"open_rate"`
	// MaxConnecting bounds handshakes in flight (default 1,024).
	MaxConnecting int `yaml:"max_connecting"`
	// Interval is the time between a connection's requests (default
	// 10s); the connections' requests are spread evenly over it, so the
	// client sends Connections/Interval requests a second.
	Interval time.Duration `yaml:"interval"`
	// Size is a request's bytes (default 32, at most 1,024).
	Size int `yaml:"size"`
	// FirstPort is the local port of the first connection to each
	// server port; the next ones count up (default 1,024, so a server
	// port takes up to 64,512 connections).
	FirstPort int `yaml:"first_port"`
}

// maxPulseConns bounds Connections: one client address with 16 server
// ports at 64,512 source ports each, and the stack's own limit.
const maxPulseConns = 1 << 20

// Validate checks the ranges.
func (c *PulseConfig) Validate() error {
	switch {
	case c.Connections < 0 || c.Connections > maxPulseConns:
		return fmt.Errorf("devices: %d is outside 1..%d", c.Connections, maxPulseConns)
	case c.Ports < 0 || c.Ports > 4096:
		return fmt.Errorf("ports: %d is outside 1..4096", c.Ports)
	case c.OpenRate < 0:
		return fmt.Errorf("open_rate: %g is negative", c.OpenRate)
	case c.MaxConnecting < 0:
		return fmt.Errorf("max_connecting: %d is negative", c.MaxConnecting)
	case c.Interval < 0:
		return fmt.Errorf("interval: %v is negative", c.Interval)
	case c.Size < 0 || c.Size > 1024:
		return fmt.Errorf("size: %d is outside 1..1024", c.Size)
	case c.FirstPort < 0 || c.FirstPort > 65535:
		return fmt.Errorf("first_port: %d is outside 1..65535", c.FirstPort)
	}
	d := c.withDefaults()
	if per := (d.Connections + d.Ports - 1) / d.Ports; d.FirstPort+per-1 > 65535 {
		return fmt.Errorf("devices: %d over %d server port(s) need %d source ports each from %d, past 65535: raise ports",
			d.Connections, d.Ports, per, d.FirstPort)
	}
	return nil
}

func (c PulseConfig) withDefaults() PulseConfig {
	if c.Connections == 0 {
		c.Connections = 1
	}
	if c.Ports == 0 {
		c.Ports = 1
	}
	if c.OpenRate == 0 {
		c.OpenRate = 100000
	}
	if c.MaxConnecting == 0 {
		c.MaxConnecting = 1024
	}
	if c.Interval == 0 {
		c.Interval = 10 * time.Second
	}
	if c.Size == 0 {
		c.Size = 32
	}
	if c.FirstPort == 0 {
		c.FirstPort = 1024
	}
	return c
}

// PulseStats are a Pulse's counters.
type PulseStats struct {
	// Opened is the connections started; Established those whose
	// handshake completed; ConnectFailures those refused, reset or
	// timed out before it did; Open those established and not failed.
	Opened          uint64 `json:"opened"`
	Established     uint64 `json:"established"`
	ConnectFailures uint64 `json:"connect_failures"`
	Open            int    `json:"open"`
	// Resets is established connections that failed (reset, timeout).
	Resets uint64 `json:"resets"`
	// Requests is the requests sent, Replies those whose whole echo came
	// back, Outstanding the requests sent and not yet answered.
	Requests    uint64 `json:"requests"`
	Replies     uint64 `json:"replies"`
	Outstanding uint64 `json:"outstanding"`
	// Skipped counts turns at which a connection was due a request
	// while its last one was unanswered, or it was not open.
	Skipped uint64 `json:"skipped"`
	// Answered is the connections that got at least one reply.
	Answered uint64 `json:"answered"`
}

// pulseConn is one connection's state: kept small (16 bytes), as a
// million of them are.
type pulseConn struct {
	c *tcp.Conn
	// got is the bytes of the outstanding request's echo received.
	got   uint16
	state pulseState
	// replied says the connection got a reply already.
	replied bool
}

type pulseState uint8

const (
	pulseConnecting pulseState = iota + 1
	pulseOpen
	pulseAwaiting // a request is outstanding
	pulseDead
)

// Pulse is the load generator on one lstack instance.
type Pulse struct {
	cfg    PulseConfig
	in     *lstack.Instance
	set    *lstack.EventSet
	remote tcp.Addr
	conns  []pulseConn
	events []tcp.Event
	req    []byte
	buf    []byte
	start  time.Duration
	// connecting is the handshakes in flight; cursor the next
	// connection due a request; turns the rounds of the request
	// schedule done (every connection once each).
	connecting int
	cursor     int
	turns      uint64
	stats      PulseStats
}

// NewPulse returns a Pulse on in whose connections go to remote (the
// first of cfg.Ports consecutive ports), starting at now.
func NewPulse(cfg PulseConfig, in *lstack.Instance, remote tcp.Addr, now time.Duration) (*Pulse, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if int(remote.Port)+cfg.Ports-1 > 65535 {
		return nil, fmt.Errorf("ports: %d ports from %d pass 65535", cfg.Ports, remote.Port)
	}
	p := &Pulse{cfg: cfg, in: in, set: in.NewEventSet(), remote: remote, start: now,
		conns: make([]pulseConn, cfg.Connections), req: make([]byte, cfg.Size), buf: make([]byte, 2048)}
	for i := range p.req {
		p.req[i] = 'a' + byte(i%26)
	}
	return p, nil
}

// Stats returns the counters.
func (p *Pulse) Stats() PulseStats { return p.stats }

// ResetStats zeroes the request counters (the end of a warm-up); the
// connection counts stay, since they describe what is open.
func (p *Pulse) ResetStats() {
	p.stats.Requests, p.stats.Replies, p.stats.Skipped = 0, 0, 0
}

// Poll runs one turn: open the connections due, handle events, send the
// requests due. Its deadline is the next open or request.
func (p *Pulse) Poll(m hw.Meter) (bool, time.Duration) {
	now := m.Now()
	worked := p.open(m, now)
	p.events = p.set.Events(p.events[:0])
	for _, ev := range p.events {
		worked = true
		p.handle(m, ev.Data.(*pulseConn), ev.Mask)
	}
	if p.send(m, now) {
		worked = true
	}
	p.set.Wait(m, worked)
	return worked, p.deadline(now)
}

// open starts the connections the open rate allows by now, no more than
// MaxConnecting in flight.
func (p *Pulse) open(m hw.Meter, now time.Duration) bool {
	due := p.openDue(now)
	worked := false
	for int(p.stats.Opened) < due && p.connecting < p.cfg.MaxConnecting {
		k := int(p.stats.Opened)
		p.stats.Opened++
		pc := &p.conns[k]
		remote := p.remote
		remote.Port += uint16(k % p.cfg.Ports)
		lp := uint16(p.cfg.FirstPort + k/p.cfg.Ports)
		c, err := p.set.Connect(m, lp, remote, pc)
		worked = true
		if err != nil {
			pc.state = pulseDead
			p.stats.ConnectFailures++
			continue
		}
		c.SetNoDelay(true)
		pc.c, pc.state = c, pulseConnecting
		p.connecting++
	}
	return worked
}

// openDue is how many connections the open rate has started by now.
func (p *Pulse) openDue(now time.Duration) int {
	n := int(float64(now-p.start)/float64(time.Second)*p.cfg.OpenRate) + 1
	return min(n, p.cfg.Connections)
}

func (p *Pulse) handle(m hw.Meter, pc *pulseConn, mask tcp.EventMask) {
	if pc.state == pulseDead {
		return
	}
	if pc.state == pulseConnecting && (pc.c.Connected() || mask&tcp.EventError != 0) {
		p.connecting--
		if !pc.c.Connected() || pc.c.Err() != nil {
			p.fail(m, pc, true)
			return
		}
		pc.state = pulseOpen
		p.stats.Established++
		p.stats.Open++
	}
	if mask&(tcp.EventReadable|tcp.EventHangup|tcp.EventError) != 0 {
		p.receive(m, pc)
	}
}

// receive reads the echo of the outstanding request.
func (p *Pulse) receive(m hw.Meter, pc *pulseConn) {
	for {
		n, err := p.in.Read(m, pc.c, p.buf)
		if n > 0 && pc.state == pulseAwaiting {
			pc.got += uint16(n)
			if int(pc.got) >= p.cfg.Size {
				pc.got = 0
				pc.state = pulseOpen
				p.stats.Replies++
				p.stats.Outstanding--
				if !pc.replied {
					pc.replied = true
					p.stats.Answered++
				}
			}
		}
		if err != nil || pc.c.Err() != nil {
			// EOF too: the echo server closes only on an error.
			p.fail(m, pc, false)
			return
		}
		if n == 0 {
			return
		}
	}
}

// fail drops a connection that was refused, reset or closed by the
// server.
func (p *Pulse) fail(m hw.Meter, pc *pulseConn, connecting bool) {
	if connecting {
		p.stats.ConnectFailures++
	} else {
		p.stats.Resets++
		p.stats.Open--
		if pc.state == pulseAwaiting {
			p.stats.Outstanding--
		}
	}
	pc.state = pulseDead
	_ = p.in.Close(m, pc.c)
	pc.c = nil
	// Opening goes on: a failed handshake leaves room for another.
	p.open(m, m.Now())
}

// send sends the requests due by now: connection k's j-th request is
// due at start + j*Interval + k*Interval/Connections, so the
// connections' requests are spread evenly over each interval, with no
// timer per connection.
func (p *Pulse) send(m hw.Meter, now time.Duration) bool {
	worked := false
	n := len(p.conns)
	for {
		at := p.dueAt(p.turns, p.cursor)
		if at > now {
			return worked
		}
		pc := &p.conns[p.cursor]
		switch pc.state {
		case pulseOpen:
			if k, err := p.in.Write(m, pc.c, p.req); err != nil || k != len(p.req) {
				p.stats.Skipped++
			} else {
				pc.state = pulseAwaiting
				p.stats.Requests++
				p.stats.Outstanding++
			}
			worked = true
		default:
			p.stats.Skipped++
		}
		p.cursor++
		if p.cursor == n {
			p.cursor = 0
			p.turns++
		}
	}
}

// dueAt is when connection k's request of turn j is due. Turn 0 of a
// connection starts one interval after it is opened at the open rate,
// so that every connection is established before its first request.
func (p *Pulse) dueAt(j uint64, k int) time.Duration {
	iv := p.cfg.Interval
	return p.start + time.Duration(j+1)*iv + time.Duration(int64(k)*int64(iv)/int64(len(p.conns)))
}

// deadline is the next open or request due after now.
func (p *Pulse) deadline(now time.Duration) time.Duration {
	d := p.dueAt(p.turns, p.cursor)
	if int(p.stats.Opened) < p.cfg.Connections && p.connecting < p.cfg.MaxConnecting {
		next := p.start + time.Duration(float64(p.stats.Opened)/p.cfg.OpenRate*float64(time.Second))
		if next <= now {
			next = now + 1
		}
		d = min(d, next)
	}
	return d
}
