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
	sc.in, sc.out, s.args = runCommands(m, s.store, &s.stats, sc.in, sc.out, s.args)
}

// runCommands runs every complete command in in against store, appending
// the replies to out, and returns what is left of in (an incomplete
// command, or nothing after a protocol error), out and the argument
// slice for reuse. Each command is charged its dispatch, its bytes
// scanned and its own procedure (CostOps): Redis's processInputBuffer
// parses the buffer, processCommand and call() run the command's proc.
func runCommands(m hw.Meter, store *resp.Store, st *ServerStats, in, out []byte, args [][]byte) ([]byte, []byte, [][]byte) {
	off := 0
	for off < len(in) {
		a, n, err := resp.ParseCommand(in[off:], args)
		args = a
		if errors.Is(err, resp.ErrIncomplete) {
			break
		}
		if err != nil {
			st.ProtocolErrors++
			out = resp.AppendError(out, "ERR "+err.Error())
			return in[:0], out, args
		}
		off += n
		m.Charge(CostCommand, 1)
		m.Charge(appcost.ParseByte, int64(n))
		name, _ := resp.CommandName(args)
		m.Charge(commandOp(name), 1)
		out = store.Execute(out, args)
		st.Commands++
	}
	return append(in[:0], in[off:]...), out, args
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
