package rtc

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// AcceptFunc is called on the lcore for every connection a listener
// accepts and returns its handler, or nil to refuse it (the connection
// is then closed, and counted: ListenerStats.Refused). It may write to c
// (a greeting) and keep c.
type AcceptFunc func(c *Conn) Handler

// ListenerStats counts what a listener did, over every lcore.
type ListenerStats struct {
	// Accepted connections were handed to the accept function; Refused
	// of them it gave no handler (and they were closed).
	Accepted, Refused uint64
}

// Listener is a listening port on every lcore of a runtime (Gazelle's
// listen_shadow, as stack/gonet's): each lcore accepts the connections
// RSS brings to its queue and runs their handlers itself.
type Listener struct {
	port   uint16
	accept AcceptFunc
	shards []*shard

	accepted, refused atomic.Uint64
	closeOnce         sync.Once
}

// shard is the listener on one lcore (lcore only, but for lc).
type shard struct {
	l  *Listener
	lc *rt.Lcore
	tl *tcp.Listener
}

// DefaultBacklog is the accept queue length when Listen is given none.
const DefaultBacklog = 1024

// Listen listens on port of every address of r's stack, on every lcore,
// and calls accept on the lcore that got each connection. On a stack
// with IPv6 it is one dual-stack listener on [::] (IPv4 connections
// too, Linux's net.ipv6.bindv6only = 0), on an IPv4-only stack one on
// 0.0.0.0. A backlog of 0 is DefaultBacklog. Listen waits for every
// lcore, so it must not be called on an lcore.
func Listen(r *rt.Runtime, port uint16, backlog int, accept AcceptFunc) (*Listener, error) {
	if accept == nil {
		return nil, fmt.Errorf("rtc: listen on port %d: %w", port, ErrNilHandler)
	}
	if backlog <= 0 {
		backlog = DefaultBacklog
	}
	var ip tcp.IP // 0.0.0.0
	if r.HasIPv6() {
		ip = tcp.IPFrom16([16]byte{}) // [::], dual-stack
	}
	l := &Listener{port: port, accept: accept}
	for _, lc := range r.Lcores() {
		s := &shard{l: l, lc: lc}
		err := onLcore(lc, func(lc *rt.Lcore) error {
			tl, err := lc.Instance().TCP().Listen(ip, port, backlog)
			if err != nil {
				return err
			}
			tl.SetV6Only(false)
			s.tl = tl
			lc.WatchListener(tl, s)
			return nil
		})
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("rtc: listen on port %d, lcore %d: %w", port, lc.ID(), err)
		}
		l.shards = append(l.shards, s)
	}
	return l, nil
}

// onLcore runs fn on lc and waits for its answer (not from an lcore).
func onLcore(lc *rt.Lcore, fn func(*rt.Lcore) error) error {
	res := make(chan error, 1)
	if err := lc.Submit(func(lc *rt.Lcore) { res <- fn(lc) }); err != nil {
		return err
	}
	select {
	case err := <-res:
		return err
	case <-lc.Done():
		return rt.ErrStopped
	}
}

// Port returns the listening port.
func (l *Listener) Port() uint16 { return l.port }

// Stats returns the listener's counters. Safe from any goroutine.
func (l *Listener) Stats() ListenerStats {
	return ListenerStats{Accepted: l.accepted.Load(), Refused: l.refused.Load()}
}

// Close stops listening on every lcore and closes the connections not
// yet accepted; accepted ones go on. It waits for every lcore, so it
// must not be called on an lcore.
func (l *Listener) Close() {
	l.closeOnce.Do(func() {
		for _, s := range l.shards {
			_ = onLcore(s.lc, func(lc *rt.Lcore) error {
				if s.tl != nil {
					lc.UnwatchListener(s.tl)
					s.tl.Close()
					s.tl = nil
				}
				return nil
			})
		}
	})
}

// ListenerEvent implements rt.ListenerHandler: it accepts every
// established connection and hands it to the accept function.
func (s *shard) ListenerEvent(lc *rt.Lcore, _ tcp.EventMask) {
	for s.tl != nil {
		tc, ok := s.tl.Accept()
		if !ok {
			return
		}
		s.l.accepted.Add(1)
		c := &Conn{lc: lc, tc: tc, la: tc.LocalAddr(), ra: tc.RemoteAddr()}
		h := s.l.accept(c)
		if c.closed {
			// The accept function closed it already.
			continue
		}
		if h == nil {
			s.l.refused.Add(1)
			c.closed = true
			_ = tc.Close()
			continue
		}
		tc.SetNoDelay(true)
		c.setHandler(h)
		lc.Watch(tc, c)
		// Bytes (or a FIN) may have arrived with or right after the
		// handshake, before the connection had a handler: their event
		// went by unheard.
		if tc.RecvBuffered() > 0 || tc.Readable() {
			c.ConnEvent(lc, tcp.EventReadable)
		}
	}
}

// LcoreStopped implements rt.ListenerHandler.
func (s *shard) LcoreStopped() {}

var _ rt.ListenerHandler = (*shard)(nil)
