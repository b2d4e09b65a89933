package gonet

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// DefaultBacklog is the accept queue length of Listen.
const DefaultBacklog = 1024

// Listener is a TCP listener on every lcore of a runtime (Gazelle's
// listen_shadow): each instance accepts the connections RSS brings to its
// queue, and Accept hands them out from one queue. It implements
// net.Listener.
type Listener struct {
	r       *rt.Runtime
	addr    *net.TCPAddr
	opts    Options
	ch      chan *Conn
	closeCh chan struct{}
	closed  atomic.Bool
	dead    chan struct{}
	deadOne sync.Once
	shards  []*shard
}

// shard is the listener on one lcore.
type shard struct {
	l          *Listener
	lc         *rt.Lcore
	tl         *tcp.Listener
	task       *rt.Task
	pending    *Conn
	backlogged atomic.Bool
}

// Listen listens on port of every address of the runtime's stack, as
// net.Listen("tcp", ":port") does: on a stack with IPv6 it is one
// dual-stack listener on [::] (IPV6_V6ONLY off, Linux's
// net.ipv6.bindv6only = 0), which takes IPv4 connections too and reports
// their peers as IPv4 addresses; on an IPv4-only stack it listens on
// 0.0.0.0 and its Addr is the stack's IPv4 address.
func Listen(r *rt.Runtime, port uint16) (*Listener, error) {
	return ListenOptions(r, port, DefaultBacklog, Options{})
}

// ListenOptions is Listen with a backlog and ring sizes for the accepted
// connections.
func ListenOptions(r *rt.Runtime, port uint16, backlog int, o Options) (*Listener, error) {
	return listen(r, wildcardSpec(r, port), backlog, o)
}

func listen(r *rt.Runtime, spec listenSpec, backlog int, o Options) (*Listener, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("gonet listen: %w", err)
	}
	if backlog <= 0 {
		backlog = DefaultBacklog
	}
	port := spec.port
	l := &Listener{r: r, addr: spec.addr, opts: o,
		ch: make(chan *Conn, backlog), closeCh: make(chan struct{}), dead: make(chan struct{})}
	for _, lc := range r.Lcores() {
		s := &shard{l: l, lc: lc}
		s.task = rt.NewTask(s.accept)
		res := make(chan error, 1)
		err := lc.Submit(func(lc *rt.Lcore) {
			tl, err := lc.Instance().TCP().Listen(spec.ip, port, backlog)
			if err != nil {
				res <- err
				return
			}
			tl.SetV6Only(spec.v6only)
			s.tl = tl
			lc.WatchListener(tl, s)
			res <- nil
		})
		if err == nil {
			select {
			case err = <-res:
			case <-lc.Done():
				err = rt.ErrStopped
			}
		}
		if err != nil {
			l.Close()
			return nil, opError("listen", nil, l.addr, sysErr("listen", err))
		}
		l.shards = append(l.shards, s)
	}
	return l, nil
}

// ListenerEvent implements rt.ListenerHandler.
func (s *shard) ListenerEvent(lc *rt.Lcore, _ tcp.EventMask) { s.accept(lc) }

// LcoreStopped implements rt.ListenerHandler.
func (s *shard) LcoreStopped() { s.l.deadOne.Do(func() { close(s.l.dead) }) }

// accept moves established connections from the engine's accept queue to
// the listener's channel while it has room (lcore only).
func (s *shard) accept(lc *rt.Lcore) {
	if s.tl == nil {
		return
	}
	for {
		if s.pending == nil {
			tc, ok := s.tl.Accept()
			if !ok {
				s.backlogged.Store(false)
				return
			}
			c := newConn(lc, s.l.opts)
			c.attach(lc, tc)
			c.service(lc)
			s.pending = c
		}
		// Announce the backlog before trying, so that an Accept that
		// empties the channel right after a failed send sees it.
		s.backlogged.Store(true)
		select {
		case s.l.ch <- s.pending:
			s.pending = nil
		default:
			return
		}
	}
}

// Accept implements net.Listener.
func (l *Listener) Accept() (net.Conn, error) {
	if l.closed.Load() {
		return nil, opError("accept", nil, l.addr, net.ErrClosed)
	}
	select {
	case c := <-l.ch:
		for _, s := range l.shards {
			if s.backlogged.Load() {
				s.lc.Kick(s.task)
			}
		}
		return c, nil
	case <-l.closeCh:
		return nil, opError("accept", nil, l.addr, net.ErrClosed)
	case <-l.dead:
		return nil, opError("accept", nil, l.addr, sysErr("accept", rt.ErrStopped))
	}
}

// Close implements net.Listener: it stops listening on every lcore and
// closes the connections not yet accepted.
func (l *Listener) Close() error {
	if !l.closed.CompareAndSwap(false, true) {
		return opError("close", nil, l.addr, net.ErrClosed)
	}
	close(l.closeCh)
	for _, s := range l.shards {
		done := make(chan struct{})
		if err := s.lc.Submit(func(lc *rt.Lcore) {
			if s.tl != nil {
				lc.UnwatchListener(s.tl)
				s.tl.Close()
				s.tl = nil
			}
			if s.pending != nil {
				_ = s.pending.Close()
				s.pending = nil
			}
			close(done)
		}); err == nil {
			select {
			case <-done:
			case <-s.lc.Done():
			}
		}
	}
	for {
		select {
		case c := <-l.ch:
			_ = c.Close()
		default:
			return nil
		}
	}
}

// Addr implements net.Listener.
func (l *Listener) Addr() net.Addr { return l.addr }

var _ net.Listener = (*Listener)(nil)
