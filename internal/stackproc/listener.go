package stackproc

import (
	"encoding/binary"
	"hash/fnv"
	"net"
	"net/netip"
	"sync"

	"github.com/savanna-sim/savanna/stack/gonet"
)

// A listener is one listening socket of the stack, shared by every
// process holding a descriptor of it: the one that called listen and the
// children it forked after (nginx's master and workers). Each holder has
// a slot of its own in its own memfd (a member); the accept queue is the
// listener's, and its length is published in every member's slot, so
// each process's epoll sees it. The listener lives while it has members
// or fork registrations not yet claimed (pending), as a Linux socket
// lives while a file refers to it.
type listener struct {
	s      *Server
	g      *portGroup
	port   uint16
	addr   netip.Addr
	fam    int
	takes  uint8
	v6only bool
	acc    chan *gonet.Conn
	done   chan struct{}

	mu      sync.Mutex
	members []*sock
	pending int
	closed  bool
	rr      int // the next exclusive member to wake
}

// A portGroup is the stack's listener on a port and the listeners of the
// processes that share it: one, or several SO_REUSEPORT listeners among
// which connections are spread by a hash of the 4-tuple, as Linux's
// reuseport_select_sock (net/core/sock_reuseport.c) scales the flow hash
// over the group with reciprocal_scale.
type portGroup struct {
	s     *Server
	port  uint16
	takes uint8
	reuse bool
	ln    *gonet.Listener
	lst   []*listener // under s.mu
}

// flowHash is the 4-tuple's hash (FNV-1a; Linux uses inet_ehashfn with a
// boot-time secret, so only the spreading, not the values, is Linux's).
func flowHash(c *gonet.Conn) uint32 {
	h := fnv.New32a()
	for _, a := range []net.Addr{c.RemoteAddr(), c.LocalAddr()} {
		if t, ok := a.(*net.TCPAddr); ok {
			h.Write(t.IP.To16())
			var p [2]byte
			binary.BigEndian.PutUint16(p[:], uint16(t.Port))
			h.Write(p[:])
		}
	}
	return h.Sum32()
}

// acceptLoop moves the stack's new connections into the accept queue of
// one listener of the group: the only one, or the one the flow hash
// picks. A full queue holds the loop (and so the stack's backlog).
func (g *portGroup) acceptLoop() {
	defer g.s.wg.Done()
	for {
		nc, err := g.ln.Accept()
		if err != nil {
			return
		}
		c := nc.(*gonet.Conn)
		g.s.mu.Lock()
		var l *listener
		if n := len(g.lst); n == 1 {
			l = g.lst[0]
		} else if n > 1 {
			l = g.lst[int((uint64(flowHash(c))*uint64(n))>>32)]
			g.s.counters.ReuseportSpread++
		}
		g.s.mu.Unlock()
		if l == nil {
			_ = c.Close()
			continue
		}
		select {
		case l.acc <- c:
			l.publish(true)
		case <-l.done:
			_ = c.Close()
		}
	}
}

// publish stores the accept queue's length in every member's slot (read
// under mu, after the change, so the last publication is the truth) and,
// for a new connection, wakes the members: every process that waits on
// the socket without EPOLLEXCLUSIVE, and one of those that wait with it
// (round robin, preferring a process asleep in epoll), as Linux's
// ep_poll_callback wakes one exclusive waiter per event.
func (l *listener) publish(added bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := uint32(len(l.acc))
	for _, k := range l.members {
		k.p.mem.u32(k.off + sAccq).Store(n)
	}
	if !added {
		return
	}
	var excl []*sock
	for _, k := range l.members {
		o := k.off
		bump(k.p.mem.u32(o+sEv), k.p.mem.u32(o+sWaiters)) // blocking accept
		if k.p.mem.u32(o+sExcl).Load() != 0 {
			excl = append(excl, k)
			continue
		}
		k.p.ringApp()
	}
	if len(excl) == 0 {
		return
	}
	pick := -1
	for i := range excl {
		j := (l.rr + i) % len(excl)
		if excl[j].p.mem.u32(hAppPoll).Load() != 0 {
			pick = j
			break
		}
	}
	if pick < 0 {
		pick = l.rr % len(excl)
	}
	l.rr = pick + 1
	for i, k := range excl {
		if i == pick {
			k.p.ringApp()
			continue
		}
		k.p.mem.u32(hStackGen).Add(1) // seen at the process's next look, not woken
	}
	l.s.mu.Lock()
	l.s.counters.ExclusiveWakes++
	l.s.counters.ExclusiveSkipped += uint64(len(excl) - 1)
	l.s.mu.Unlock()
}

// take pops a queued connection, nil when the queue is empty.
func (l *listener) take() *gonet.Conn {
	select {
	case c := <-l.acc:
		l.publish(false)
		return c
	default:
		return nil
	}
}

// addMember makes k (a slot of some process) a holder of l; false when l
// closed meanwhile.
func (l *listener) addMember(k *sock) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	l.members = append(l.members, k)
	k.p.mem.u32(k.off + sAccq).Store(uint32(len(l.acc)))
	l.mu.Unlock()
	return true
}

// removeMember drops k; the listener closes with its last holder.
func (l *listener) removeMember(k *sock) {
	l.mu.Lock()
	for i, m := range l.members {
		if m == k {
			l.members = append(l.members[:i], l.members[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	l.maybeClose()
}

// hold and release count a fork registration not yet claimed.
func (l *listener) hold() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.pending++
	return true
}

func (l *listener) release() {
	l.mu.Lock()
	l.pending--
	l.mu.Unlock()
	l.maybeClose()
}

// maybeClose closes l when nothing holds it: it leaves its group (the
// stack's listener closes with the group's last), and its queued
// connections are reset, as Linux's inet_csk_listen_stop.
func (l *listener) maybeClose() {
	l.mu.Lock()
	if l.closed || len(l.members) > 0 || l.pending > 0 {
		l.mu.Unlock()
		return
	}
	l.closed = true
	close(l.done)
	l.mu.Unlock()
	l.s.leaveGroup(l)
	for {
		select {
		case c := <-l.acc:
			_ = c.Close()
			continue
		default:
		}
		return
	}
}
