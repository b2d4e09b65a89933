package redis

import (
	"errors"
	"github.com/savanna-sim/savanna/apps/appcost"
	"time"

	"github.com/savanna-sim/savanna/apps/resp"
	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// ServerStats are a server instance's counters.
type ServerStats struct {
	Accepted       uint64 `json:"accepted"`
	Closed         uint64 `json:"closed"`
	Commands       uint64 `json:"commands"`
	ProtocolErrors uint64 `json:"protocol_errors"`
	// Open is the connections open now.
	Open int `json:"open"`
}

// Server is a RESP key-value server on one stack instance. Several
// instances of a host each run one, over one shared Store (the
// simulation is single-threaded; a real multi-threaded server would
// shard or lock).
type Server struct {
	in     *lstack.Instance
	set    *lstack.EventSet
	ln     *tcp.Listener
	store  *resp.Store
	open   int
	events []tcp.Event
	args   [][]byte
	stats  ServerStats
	// accepted is s.accept as a value made once, for AcceptAll.
	accepted func(*tcp.Conn) any
}

type serverConn struct {
	c      *tcp.Conn
	in     []byte // received bytes not yet parsed
	out    []byte // replies not yet written
	closed bool   // dropped: its last events are ignored
}

// NewServer listens on port of in's address, with an event set of its
// own: other applications on the instance do not see its events.
func NewServer(in *lstack.Instance, port uint16, store *resp.Store) (*Server, error) {
	set := in.NewEventSet()
	ln, err := set.Listen(port, 1024)
	if err != nil {
		return nil, err
	}
	s := &Server{in: in, set: set, ln: ln, store: store}
	s.accepted = s.accept
	return s, nil
}

// Stats returns the counters.
func (s *Server) Stats() ServerStats {
	st := s.stats
	st.Open = s.open
	return st
}

// ResetStats zeroes the counters (the end of a warm-up).
func (s *Server) ResetStats() { s.stats = ServerStats{} }

// Poll runs one turn of the event loop: accept, read, execute, reply.
func (s *Server) Poll(m hw.Meter) (bool, time.Duration) {
	s.events = s.set.Events(s.events[:0])
	worked := false
	for _, ev := range s.events {
		switch {
		case ev.Listener != nil:
			if s.set.AcceptAll(m, s.ln, s.accepted) > 0 {
				worked = true
			}
		case ev.Conn != nil:
			if sc := ev.Data.(*serverConn); !sc.closed {
				s.serve(m, sc, ev.Mask)
				worked = true
			}
		}
	}
	s.set.Wait(m, worked)
	return worked, hw.NoDeadline
}

// accept sets up a connection AcceptAll took.
func (s *Server) accept(c *tcp.Conn) any {
	c.SetNoDelay(true) // Redis sets TCP_NODELAY on clients
	s.open++
	s.stats.Accepted++
	return &serverConn{c: c}
}

func (s *Server) serve(m hw.Meter, sc *serverConn, mask tcp.EventMask) {
	if mask&(tcp.EventReadable|tcp.EventHangup|tcp.EventError) != 0 {
		var eof bool
		var err error
		sc.in, eof, err = s.in.ReadAvailable(m, sc.c, sc.in)
		if err != nil || (eof && len(sc.in) == 0) {
			s.drop(m, sc)
			return
		}
		s.execute(m, sc)
	}
	s.flush(m, sc)
}

// execute runs every complete command received, appending replies.
func (s *Server) execute(m hw.Meter, sc *serverConn) {
	off := 0
	for off < len(sc.in) {
		args, n, err := resp.ParseCommand(sc.in[off:], s.args)
		s.args = args
		if errors.Is(err, resp.ErrIncomplete) {
			break
		}
		if err != nil {
			s.stats.ProtocolErrors++
			sc.out = resp.AppendError(sc.out, "ERR "+err.Error())
			sc.in = sc.in[:0]
			return
		}
		off += n
		m.Charge(CostCommand, 1)
		m.Charge(appcost.ParseByte, int64(n))
		sc.out = s.store.Execute(sc.out, args)
		s.stats.Commands++
	}
	sc.in = append(sc.in[:0], sc.in[off:]...)
}

func (s *Server) flush(m hw.Meter, sc *serverConn) {
	rest, err := s.in.WriteAvailable(m, sc.c, sc.out)
	switch {
	case err != nil:
		s.drop(m, sc)
	case len(rest) == 0:
		sc.out = sc.out[:0]
	default:
		sc.out = rest // wait for EventWritable
	}
}

func (s *Server) drop(m hw.Meter, sc *serverConn) {
	_ = s.in.Close(m, sc.c)
	sc.closed = true
	s.open--
	s.stats.Closed++
}
