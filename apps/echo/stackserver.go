package echo

import (
	"errors"
	"io"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// StackStats are a StackServer's counters.
type StackStats struct {
	Accepted uint64 `json:"accepted"`
	Closed   uint64 `json:"closed"`
	// Open is the connections open now.
	Open  int    `json:"open"`
	Bytes uint64 `json:"bytes"`
	// Backlogged counts the times a reply did not fit the send buffer
	// and waited for EventWritable.
	Backlogged uint64 `json:"backlogged"`
	Errors     uint64 `json:"errors"`
}

// StackServer is the echo server as an event loop on one lstack
// instance, listening on a range of ports. It keeps no state per
// connection: a read goes into one scratch buffer shared by every
// connection and is written straight back, so that a million idle
// connections cost the server nothing beyond the stack's own; only a
// reply the send buffer could not take whole is kept, until it can.
type StackServer struct {
	in      *lstack.Instance
	set     *lstack.EventSet
	lns     []*tcp.Listener
	events  []tcp.Event
	scratch []byte
	pending map[*tcp.Conn][]byte
	stats   StackStats
	accept  func(*tcp.Conn) any
}

// NewStackServer listens on ports [port, port+count) of in's address
// with an event set of its own.
func NewStackServer(in *lstack.Instance, port uint16, count int, backlog int) (*StackServer, error) {
	if count < 1 || int(port)+count-1 > 65535 {
		return nil, errors.New("echo: the port range must hold 1 to 65535-port ports")
	}
	s := &StackServer{in: in, set: in.NewEventSet(), scratch: make([]byte, 16<<10), pending: map[*tcp.Conn][]byte{}}
	for p := 0; p < count; p++ {
		ln, err := s.set.Listen(port+uint16(p), backlog)
		if err != nil {
			return nil, err
		}
		s.lns = append(s.lns, ln)
	}
	s.accept = func(*tcp.Conn) any {
		s.stats.Accepted++
		s.stats.Open++
		return nil
	}
	return s, nil
}

// Stats returns the counters.
func (s *StackServer) Stats() StackStats { return s.stats }

// ResetStats zeroes the counters but Open (the end of a warm-up).
func (s *StackServer) ResetStats() { s.stats = StackStats{Open: s.stats.Open} }

// Poll runs one turn of the event loop: accept, read, echo.
func (s *StackServer) Poll(m hw.Meter) (bool, time.Duration) {
	s.events = s.set.Events(s.events[:0])
	worked := false
	for _, ev := range s.events {
		worked = true
		if ev.Listener != nil {
			s.set.AcceptAll(m, ev.Listener, s.accept)
			continue
		}
		c := ev.Conn
		if ev.Mask&tcp.EventWritable != 0 && s.pending[c] != nil {
			s.flush(m, c, s.pending[c])
		}
		if ev.Mask&(tcp.EventReadable|tcp.EventHangup|tcp.EventError) != 0 {
			s.serve(m, c)
		}
	}
	s.set.Wait(m, worked)
	return worked, hw.NoDeadline
}

// serve reads what c has and echoes it, until it would block, then
// closes c at EOF or on an error.
func (s *StackServer) serve(m hw.Meter, c *tcp.Conn) {
	for s.pending[c] == nil {
		n, err := s.in.Read(m, c, s.scratch)
		if n > 0 {
			s.stats.Bytes += uint64(n)
			s.flush(m, c, s.scratch[:n])
		}
		if errors.Is(err, tcp.ErrClosed) {
			return // closed by us already: its last events
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.stats.Errors++
			}
			s.close(m, c)
			return
		}
		if n == 0 {
			return
		}
	}
}

// flush writes p to c, keeping what does not fit for the next
// EventWritable.
func (s *StackServer) flush(m hw.Meter, c *tcp.Conn, p []byte) {
	n, err := s.in.Write(m, c, p)
	if errors.Is(err, tcp.ErrClosed) {
		delete(s.pending, c)
		return
	}
	if err != nil {
		s.stats.Errors++
		s.close(m, c)
		return
	}
	if n == len(p) {
		delete(s.pending, c)
		return
	}
	if s.pending[c] == nil {
		s.stats.Backlogged++
	}
	s.pending[c] = append([]byte(nil), p[n:]...)
}

func (s *StackServer) close(m hw.Meter, c *tcp.Conn) {
	delete(s.pending, c)
	_ = s.in.Close(m, c)
	s.stats.Closed++
	s.stats.Open--
}
