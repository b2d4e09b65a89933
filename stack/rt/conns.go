package rt

import "github.com/savanna-sim/savanna/stack/tcp"

// SocketRow is one socket of a listing (Runtime.Survey): the engine's
// view (tcp.SocketInfo) with the lcore that owns it and the bytes waiting
// in the socket layer's rings in front of TCP (stack/gonet's, Gazelle's
// recv_ring and send_ring), which TCP's own queues do not see.
type SocketRow struct {
	Lcore int
	tcp.SocketInfo
	// RxRing: bytes TCP handed to the socket layer and the application
	// has not read yet. TxRing: bytes the application wrote that the
	// lcore has not yet moved into TCP's send buffer.
	RxRing, TxRing int
}

// RingReporter is implemented by a ConnHandler that keeps bytes of its
// own in front of TCP (stack/gonet.Conn's rings). Survey calls it on the
// lcore; it must be safe there and cheap.
type RingReporter interface {
	RingBytes() (rx, tx int)
}

// Survey is what one visit to every lcore gathers: the counters of
// Snapshot, the sockets by state, and, when asked for, the sockets
// themselves. Each lcore's part is read on that lcore in one task, so it
// is consistent in itself (a connection counted by state is the one
// listed); lcores are visited one after the other.
type Survey struct {
	Snapshot
	// States counts each lcore's sockets by state, indexed as Lcores.
	States []tcp.StateCounts
	// Sockets lists every lcore's sockets, lcore by lcore, when Survey
	// was asked for them; nil otherwise.
	Sockets []SocketRow
}

// Survey collects the counters as Snapshot does and the sockets by state,
// and lists the sockets when sockets is true. Like Snapshot it asks each
// running lcore to read its own stack (so nothing is read while the lcore
// writes it) and reads a stopped lcore directly. Safe from any goroutine.
func (r *Runtime) Survey(sockets bool) Survey {
	s := Survey{Snapshot: Snapshot{Lcores: make([]LcoreSnapshot, len(r.lcores))},
		States: make([]tcp.StateCounts, len(r.lcores))}
	rows := make([][]SocketRow, len(r.lcores))
	for i, lc := range r.lcores {
		r.onLcore(lc, func(lc *Lcore) {
			st := lc.inst.TCP()
			s.Lcores[i] = LcoreSnapshot{Lcore: lc.id, Driver: lc.stats, Stack: lc.inst.Stats(),
				Iface: lc.inst.Iface().Stats(), TCP: st.Stats(), Conns: st.NumConns()}
			if ifc := lc.inst.Iface(); ifc.HasIPv6() {
				s6 := ifc.Stats6()
				s.Lcores[i].Iface6 = &s6
				s.Lcores[i].Addrs6 = lc.addrs6()
			}
			s.States[i] = st.CountStates()
			if sockets {
				rows[i] = lc.socketRows()
			}
		})
	}
	if sockets {
		s.Sockets = []SocketRow{}
		for _, r := range rows {
			s.Sockets = append(s.Sockets, r...)
		}
	}
	s.Port = r.dev.Stats()
	s.Pool = r.pool.Stats()
	// The figures the lcores share, which any goroutine may read.
	s.ARPCopyDrops = arpCopyDrops(r.lcores)
	s.TCPMem = r.mem.Stats()
	return s
}

// socketRows lists the lcore's sockets (lcore only).
func (lc *Lcore) socketRows() []SocketRow {
	infos := lc.inst.TCP().AppendSockets(nil)
	// The handlers are keyed by connection; find each row's by tuple.
	rings := make(map[[2]tcp.Addr]RingReporter, len(lc.conns))
	for c, h := range lc.conns {
		if rr, ok := h.(RingReporter); ok {
			rings[[2]tcp.Addr{c.LocalAddr(), c.RemoteAddr()}] = rr
		}
	}
	rows := make([]SocketRow, len(infos))
	for i, in := range infos {
		rows[i] = SocketRow{Lcore: lc.id, SocketInfo: in}
		if in.State == tcp.StateListen {
			continue
		}
		if rr := rings[[2]tcp.Addr{in.Local, in.Remote}]; rr != nil {
			rows[i].RxRing, rows[i].TxRing = rr.RingBytes()
		}
	}
	return rows
}

// onLcore runs fn with lc's state to itself: on the lcore while it runs
// (a task, which the lcore runs between polls), directly once it has
// stopped or before the runtime started. It returns when fn has run.
// A task submitted just as the lcore
// stops may never run, so the caller also waits for Done and then reads
// the stopped lcore itself, unless the task ran after all.
func (r *Runtime) onLcore(lc *Lcore, fn func(*Lcore)) {
	if !r.started.Load() {
		fn(lc)
		return
	}
	done := make(chan struct{})
	if err := lc.Submit(func(lc *Lcore) { fn(lc); close(done) }); err == nil {
		select {
		case <-done:
			return
		case <-lc.done:
		}
	}
	<-lc.done
	select {
	case <-done:
	default:
		fn(lc)
	}
}
