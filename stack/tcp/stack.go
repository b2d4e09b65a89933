package tcp

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Output is the boundary towards the network layer (stack/ipv4 via
// stack/iface). The engine calls SendSegment once per segment it emits.
// seg is a complete TCP segment (header, options, payload) with its
// checksum set (or, with Config.ChecksumOffloadTx, the pseudo-header sum
// a NIC expects). seg is lent for the duration of the call only: the
// callee copies it into an mbuf (or an IPv4 packet) before returning, so
// the engine can reuse one scratch buffer and allocate nothing per
// segment. A non-nil error counts the segment as dropped at output
// (drops.output); retransmission repairs the loss as for any other drop.
type Output interface {
	SendSegment(now time.Duration, src, dst [4]byte, seg []byte) error
}

// SegmentLender is an Output that can lend the engine the buffer a
// segment is built in: the tailroom of the mbuf that will carry it. The
// engine then writes each segment once, straight into the buffer the NIC
// sends, and SendSegment passes it on without a copy (Gazelle's zero-copy
// path). SegmentBuffer returns nil when it cannot lend n bytes; the
// engine then builds the segment in its own scratch buffer.
type SegmentLender interface {
	Output
	SegmentBuffer(n int) []byte
}

// Addr is an IPv4 address and port.
type Addr struct {
	IP   [4]byte
	Port uint16
}

func (a Addr) String() string {
	return fmt.Sprintf("%d.%d.%d.%d:%d", a.IP[0], a.IP[1], a.IP[2], a.IP[3], a.Port)
}

// NoDeadline is what Poll returns when no timer is armed.
const NoDeadline = time.Duration(math.MaxInt64)

// Socket errors.
var (
	ErrWouldBlock   = errors.New("tcp: operation would block")
	ErrConnRefused  = errors.New("tcp: connection refused")
	ErrConnReset    = errors.New("tcp: connection reset by peer")
	ErrConnAborted  = errors.New("tcp: connection aborted")
	ErrTimeout      = errors.New("tcp: connection timed out")
	ErrClosed       = errors.New("tcp: use of closed connection")
	ErrAddrInUse    = errors.New("tcp: address already in use")
	ErrConnLimit    = errors.New("tcp: connection limit reached")
	ErrNoPorts      = errors.New("tcp: no ephemeral port available")
	ErrInvalidState = errors.New("tcp: invalid state for operation")
)

type listenKey struct {
	addr [4]byte
	port uint16
}

// Stack is one TCP engine: its connections, listeners, timers and
// counters. It is sans-I/O: it never reads a clock or blocks; the caller
// passes `now` (virtual or real time since the start of the run) to
// Input, Poll and Connect, and transmits what Output receives. One Stack
// serves one lcore; it is not safe for concurrent use.
type Stack struct {
	cfg   Config
	out   Output
	meter hw.Meter

	isnKey, cookieKey, tsKey sipKey

	conns     map[fourTuple]*Conn
	listeners map[listenKey]*Listener
	timers    connHeap
	dirty     []*Conn
	ready     []Event
	scratch   []byte
	spare     spareRings

	nextPort uint16
	connSeq  uint64

	chalWindow time.Duration
	chalCount  int

	stats Stats
	// budget is the process-wide connection limit, nil when none.
	budget *ConnBudget
}

// New returns a stack. The secrets of ISNs (RFC 6528), SYN cookies and
// timestamp offsets are drawn from rng, so runs are reproducible.
func New(cfg Config, rng *rand.Rand, out Output) (*Stack, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil || out == nil {
		return nil, errors.New("tcp: New needs a random source and an Output")
	}
	s := &Stack{
		cfg:       cfg,
		out:       out,
		conns:     make(map[fourTuple]*Conn),
		listeners: make(map[listenKey]*Listener),
		scratch:   make([]byte, MaxHeaderLen+cfg.MTU),
		nextPort:  uint16(32768 + rng.IntN(28232)),
	}
	s.isnKey = sipKey{rng.Uint64(), rng.Uint64()}
	s.cookieKey = sipKey{rng.Uint64(), rng.Uint64()}
	s.tsKey = sipKey{rng.Uint64(), rng.Uint64()}
	return s, nil
}

// SetMeter makes the stack charge its work (segments in and out, bytes
// summed and copied, timer expiries) to m (architecture invariant 4).
func (s *Stack) SetMeter(m hw.Meter) { s.meter = m }

func (s *Stack) charge(op hw.CostOp, n int) {
	if s.meter != nil && n > 0 {
		s.meter.Charge(op, int64(n))
	}
}

// Config returns the stack's configuration with defaults applied.
func (s *Stack) Config() Config { return s.cfg }

// Stats returns a snapshot of the counters.
func (s *Stack) Stats() Stats { return s.stats }

// NumConns returns the number of connections in any state but LISTEN.
func (s *Stack) NumConns() int { return len(s.conns) }

// Input processes one received segment (TCP header and payload, IP header
// removed) sent from src to dst. seg is only read during the call.
// Input verifies the checksum (RFC 9293 section 3.1); use
// InputVerified when the NIC already did.
func (s *Stack) Input(now time.Duration, src, dst [4]byte, seg []byte) {
	s.input(now, src, dst, seg, false)
}

// InputVerified is Input for a segment whose checksum the NIC has
// verified (DPDK's RTE_MBUF_F_RX_L4_CKSUM_GOOD).
func (s *Stack) InputVerified(now time.Duration, src, dst [4]byte, seg []byte) {
	s.input(now, src, dst, seg, true)
}

func (s *Stack) input(now time.Duration, src, dst [4]byte, seg []byte, verified bool) {
	s.stats.InSegs++
	s.charge(hw.CostStackTCPRx, 1)
	if !verified {
		s.charge(hw.CostChecksumByte, len(seg))
		if len(seg) < HeaderLen || !VerifyChecksum(seg, src, dst) {
			s.stats.InErrs++
			if len(seg) < HeaderLen {
				s.stats.Drops.Malformed++
			} else {
				s.stats.InCsumErrors++
				s.stats.Drops.Checksum++
			}
			return
		}
	}
	r, err := Parse(seg)
	if err != nil {
		s.stats.InErrs++
		if errors.Is(err, ErrBadOption) {
			s.stats.Drops.BadOption++
		} else {
			s.stats.Drops.Malformed++
		}
		return
	}
	// Demultiplex on the 4-tuple first, then listeners (RFC 9293 section
	// 3.10.7: a segment to a connection in LISTEN or no connection).
	id := fourTuple{localAddr: dst, remoteAddr: src, localPort: r.DstPort, remotePort: r.SrcPort}
	if c, ok := s.conns[id]; ok {
		c.input(now, &r)
		s.afterConn(now, c)
		return
	}
	if l := s.lookupListener(dst, r.DstPort); l != nil {
		l.input(now, id, &r)
		return
	}
	s.stats.Drops.NoSocket++
	s.replyRST(now, id, &r)
}

func (s *Stack) lookupListener(addr [4]byte, port uint16) *Listener {
	if l, ok := s.listeners[listenKey{addr, port}]; ok {
		return l
	}
	if l, ok := s.listeners[listenKey{[4]byte{}, port}]; ok {
		return l
	}
	return nil
}

// replyRST answers a segment that has no connection (RFC 9293 section
// 3.10.7.1): never a RST to a RST; if the segment had ACK,
// <SEQ=SEG.ACK><CTL=RST>, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
func (s *Stack) replyRST(now time.Duration, id fourTuple, r *Repr) {
	if r.Flags&FlagRST != 0 {
		return
	}
	var o Repr
	o.SrcPort, o.DstPort = id.localPort, id.remotePort
	if r.Flags&FlagACK != 0 {
		o.Seq = r.Ack
		o.Flags = FlagRST
	} else {
		o.Ack = r.Seq.Add(r.SegLen())
		o.Flags = FlagRST | FlagACK
	}
	s.stats.OutRsts++
	s.send(now, id, &o, nil, 0, 0)
}

// send emits one segment: header from o, then n payload bytes from buf at
// offset off (buf may be nil).
func (s *Stack) send(now time.Duration, id fourTuple, o *Repr, buf *ring, off, n int) {
	b := s.scratch
	if l, ok := s.out.(SegmentLender); ok {
		if lent := l.SegmentBuffer(MaxHeaderLen + n); lent != nil {
			b = lent
		}
	}
	hl := o.Emit(b)
	if n > 0 {
		buf.peek(off, b[hl:hl+n])
		s.charge(hw.CostCopyByte, n)
	}
	seg := b[:hl+n]
	if s.cfg.ChecksumOffloadTx {
		SetPseudoChecksum(seg, id.localAddr, id.remoteAddr)
	} else {
		SetChecksum(seg, id.localAddr, id.remoteAddr)
		s.charge(hw.CostChecksumByte, len(seg))
	}
	s.stats.OutSegs++
	s.charge(hw.CostStackTCPTx, 1)
	if err := s.out.SendSegment(now, id.localAddr, id.remoteAddr, seg); err != nil {
		s.stats.Drops.Output++
	}
}

// challengeAllowed applies RFC 5961 section 7's rate limit to challenge
// ACKs: at most ChallengeAckLimit per second per stack.
func (s *Stack) challengeAllowed(now time.Duration) bool {
	if now-s.chalWindow >= time.Second {
		s.chalWindow = now
		s.chalCount = 0
	}
	if s.chalCount >= s.cfg.ChallengeAckLimit {
		s.stats.Drops.ChallengeRateLimit++
		return false
	}
	s.chalCount++
	s.stats.ChallengeAcks++
	return true
}

// Poll sends what socket calls queued (writes, closes, window updates),
// runs the timers due at now and returns the next deadline (NoDeadline if
// none). The caller must call Poll again at or after that time, and after
// socket calls.
func (s *Stack) Poll(now time.Duration) time.Duration {
	for i := 0; i < len(s.dirty); i++ {
		c := s.dirty[i]
		s.dirty[i] = nil
		c.dirty = false
		if c.state != StateClosed || c.pendingRST {
			c.flush(now)
		}
		s.afterConn(now, c)
	}
	s.dirty = s.dirty[:0]
	for len(s.timers) > 0 && s.timers[0].heapAt <= now {
		c := s.timers[0]
		heap.Pop(&s.timers)
		if c.state == StateClosed {
			continue
		}
		c.onTimers(now)
		s.afterConn(now, c)
	}
	if len(s.timers) == 0 {
		return NoDeadline
	}
	return s.timers[0].heapAt
}

// markDirty queues c for flush at the next Poll.
func (s *Stack) markDirty(c *Conn) {
	if !c.dirty {
		c.dirty = true
		s.dirty = append(s.dirty, c)
	}
}

// afterConn updates c's place in the timer heap after it ran. The heap
// key is kept lazily: it only moves earlier; a conn popped early just
// finds no timer due and is pushed back at its real deadline.
func (s *Stack) afterConn(now time.Duration, c *Conn) {
	if c.state == StateClosed {
		if c.heapIdx >= 0 {
			heap.Remove(&s.timers, c.heapIdx)
		}
		return
	}
	d := c.nextDeadline()
	if d == 0 {
		return
	}
	if c.heapIdx < 0 {
		c.heapAt = d
		heap.Push(&s.timers, c)
	} else if d < c.heapAt {
		c.heapAt = d
		heap.Fix(&s.timers, c.heapIdx)
	}
}

// connHeap is a min-heap of connections by their (lazy) timer deadline.
type connHeap []*Conn

func (h connHeap) Len() int { return len(h) }
func (h connHeap) Less(i, j int) bool {
	if h[i].heapAt != h[j].heapAt {
		return h[i].heapAt < h[j].heapAt
	}
	return h[i].seqNo < h[j].seqNo // deterministic tie-break
}
func (h connHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}
func (h *connHeap) Push(x any) {
	c := x.(*Conn)
	c.heapIdx = len(*h)
	*h = append(*h, c)
}
func (h *connHeap) Pop() any {
	old := *h
	n := len(old)
	c := old[n-1]
	old[n-1] = nil
	c.heapIdx = -1
	*h = old[:n-1]
	return c
}

func heapRemove(h *connHeap, i int) { heap.Remove(h, i) }
