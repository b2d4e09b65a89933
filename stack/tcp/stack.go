package tcp

import (
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Network is what the engine asks of the network layer beneath it: the
// length of the header that layer puts in front of every segment, and the
// pseudo-header sum TCP's checksum covers (RFC 9293 section 3.1). The
// network layer implements it (stack/iface for IPv4); the engine computes
// neither itself, so another network layer (IPv6, RFC 8200 section 8.1)
// plugs in without changing it.
type Network interface {
	// HeaderLen returns the length in bytes of the network header in
	// front of every segment (IPv4 without options: 20). It is constant
	// for the Network's life: New reads it once. A segment is at most
	// Config.MTU - HeaderLen() bytes and the MSS advertised is that less
	// the TCP header (RFC 9293 section 3.7.1, RFC 879).
	HeaderLen() int
	// PseudoHeaderSum returns the one's-complement sum of the
	// pseudo-header of a TCP segment of length bytes from src to dst,
	// unfolded as checksum.Add accumulates it (for IPv4: source,
	// destination, zero, protocol 6 and the TCP length, RFC 9293 section
	// 3.1). The engine adds the segment to it to write and to verify
	// checksums.
	PseudoHeaderSum(src, dst IP, length int) uint64
}

// Output is the boundary towards the network layer (stack/ipv4 via
// stack/iface). For every segment it emits the engine first asks for a
// buffer to build it in (Lend), then sends it: with SendLent when it got
// one, with SendSegment otherwise.
//
// The segment handed over is complete (header, options, payload) with its
// checksum set over the Network's pseudo-header (or, with
// Config.ChecksumOffloadTx, holding only the folded pseudo-header sum a
// NIC expects). A non-nil error from either send counts the segment as
// dropped at output (drops.output); retransmission repairs the loss as
// for any other drop.
type Output interface {
	Network
	// Lend lends the engine a buffer of exactly n bytes to build one
	// segment in, and a non-zero token that names the loan: the tailroom
	// of the mbuf that will carry the segment, so that it is written once,
	// straight into the buffer the NIC sends (Gazelle's zero-copy path).
	// It returns (nil, 0) when it has nothing to lend; the engine then
	// builds the segment in its own buffer and calls SendSegment. A loan
	// ends with the SendLent of its token; one not sent is taken back by
	// the next Lend (the Output lends one buffer at a time), and its token
	// is refused from then on.
	Lend(n int) (buf []byte, token uint64)
	// SendLent sends the first n bytes of the buffer lent under token,
	// from src to dst, and ends the loan whatever the outcome. A token
	// that names no open loan (already sent, taken back, never lent) is
	// refused with an error and nothing is sent.
	SendLent(now time.Duration, src, dst IP, token uint64, n int) error
	// SendSegment sends seg, built in the engine's own buffer, from src
	// to dst. seg is lent for the duration of the call only: the callee
	// copies it (into an mbuf, behind its header) before returning, so
	// the engine reuses one scratch buffer and allocates nothing per
	// segment.
	SendSegment(now time.Duration, src, dst IP, seg []byte) error
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

// listenKey names a listener: its local address (its family's
// unspecified address for a wildcard listener) and port.
type listenKey struct {
	addr IP
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
	// flushHook, when set, is told which connection Poll flushes the
	// socket calls' work of (nil once it is done): SetFlushHook.
	flushHook func(c *Conn)

	isnKey, cookieKey, tsKey sipKey

	conns     connTable
	listeners map[listenKey]*Listener
	timers    connHeap
	dirty     []pollItem
	ready     []Event
	scratch   []byte
	spare     spareRings
	// advMSS is the MSS the MTU allows behind the network's header and
	// ours (RFC 9293 section 3.7.1): Config.MTU - out.HeaderLen() -
	// HeaderLen.
	advMSS int

	nextPort uint16
	connSeq  uint64
	// rtoBounds are every connection's RTO bounds.
	rtoBounds rtoBounds
	// oooStamp orders the changes of every connection's out-of-order
	// ranges (RFC 2018 section 4's "most recently received" first), one
	// counter for the stack instead of one in each connection.
	oooStamp uint64

	chalWindow time.Duration
	chalCount  int
	// rst is the token bucket of RSTs for segments with no connection
	// (Config.RSTRateLimit).
	rst tokenBucket

	stats Stats
	// mem charges the connections' buffers to the memory budget.
	mem memAcct
	// budget is the process-wide connection limit, nil when none.
	budget *ConnBudget
}

// nextStamp is the next out-of-order range's recency stamp.
func (s *Stack) nextStamp() uint64 { s.oooStamp++; return s.oooStamp }

// New returns a stack. The secrets of ISNs (RFC 6528), SYN cookies and
// timestamp offsets are drawn from rng, so runs are reproducible.
func New(cfg Config, rng *rand.Rand, out Output) (*Stack, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if rng == nil || out == nil {
		return nil, errors.New("tcp: New needs a random source and an Output")
	}
	mss, err := cfg.mssBehind(out.HeaderLen())
	if err != nil {
		return nil, err
	}
	s := &Stack{
		cfg:       cfg,
		out:       out,
		conns:     newConnTable(),
		listeners: make(map[listenKey]*Listener),
		scratch:   make([]byte, MaxHeaderLen+cfg.MTU),
		advMSS:    mss,
		nextPort:  uint16(32768 + rng.IntN(28232)),
		rtoBounds: rtoBounds{min: cfg.MinRTO, max: cfg.MaxRTO},
	}
	s.mem = memAcct{budget: NewMemBudget(cfg.Mem), stats: &s.stats}
	s.rst = newTokenBucket(cfg.RSTRateLimit)
	s.isnKey = sipKey{rng.Uint64(), rng.Uint64()}
	s.cookieKey = sipKey{rng.Uint64(), rng.Uint64()}
	s.tsKey = sipKey{rng.Uint64(), rng.Uint64()}
	return s, nil
}

// SetMeter makes the stack charge its work (segments in and out, bytes
// summed and copied, timer expiries) to m (architecture invariant 4).
func (s *Stack) SetMeter(m hw.Meter) { s.meter = m }

// SetFlushHook makes Poll call fn with each connection before it sends
// what that connection's socket calls queued (writes, closes, window
// updates after reads), and with nil once those are sent, before the
// timers run. What is sent between the two calls is the socket calls'
// own output; ACK-clocked data (sent from Input) and timer output
// (retransmits, delayed ACKs) never is. A binding that prices a socket
// call's transmit on the caller's CPU, as Linux's tcp_sendmsg ->
// tcp_push does, switches its meter there (stack/lstack).
func (s *Stack) SetFlushHook(fn func(c *Conn)) { s.flushHook = fn }

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
func (s *Stack) NumConns() int { return s.conns.len() }

// Input processes one received segment (TCP header and payload, IP header
// removed) sent from src to dst. seg is only read during the call.
// Input verifies the checksum over the pseudo-header the Output's
// Network gives (RFC 9293 section 3.1); use InputVerified when the NIC
// or the network layer already did.
func (s *Stack) Input(now time.Duration, src, dst IP, seg []byte) {
	s.input(now, src, dst, seg, false)
}

// InputVerified is Input for a segment whose checksum the NIC has
// verified (DPDK's RTE_MBUF_F_RX_L4_CKSUM_GOOD).
func (s *Stack) InputVerified(now time.Duration, src, dst IP, seg []byte) {
	s.input(now, src, dst, seg, true)
}

func (s *Stack) input(now time.Duration, src, dst IP, seg []byte, verified bool) {
	s.stats.InSegs++
	s.charge(CostSegmentRx, 1)
	if !verified {
		s.charge(hw.CostChecksumByte, len(seg))
		if len(seg) < HeaderLen || !VerifyChecksum(seg, s.out.PseudoHeaderSum(src, dst, len(seg))) {
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
	if c, ok := s.conns.get(id); ok {
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

// lookupListener finds the listener of a segment to addr:port: one bound
// to that address, else the wildcard of addr's family, else, for an IPv4
// segment, a dual-stack IPv6 listener (see dualStackListener). An IPv6
// segment never reaches a listener on 0.0.0.0, as an AF_INET socket
// never sees IPv6.
func (s *Stack) lookupListener(addr IP, port uint16) *Listener {
	if l, ok := s.listeners[listenKey{addr, port}]; ok {
		return l
	}
	if l, ok := s.listeners[listenKey{addr.unspecified(), port}]; ok {
		return l
	}
	if addr.Is4() {
		return s.dualStackListener(addr, port)
	}
	return nil
}

// replyRST answers a segment that has no connection (RFC 9293 section
// 3.10.7.1): never a RST to a RST; if the segment had ACK,
// <SEQ=SEG.ACK><CTL=RST>, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>.
// Such RSTs cost an attacker nothing to draw, so they pass a stack-wide
// token bucket first (Config.RSTRateLimit, FreeBSD's badport_bandlim);
// it reports whether the RST was sent.
func (s *Stack) replyRST(now time.Duration, id fourTuple, r *Repr) bool {
	if r.Flags&FlagRST != 0 {
		return false
	}
	if !s.rst.allow(now) {
		s.stats.RstRateLimited++
		return false
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
	return true
}

// send emits one segment: header from o, then n payload bytes from buf at
// offset off (buf may be nil).
func (s *Stack) send(now time.Duration, id fourTuple, o *Repr, buf *ring, off, n int) {
	b, token := s.out.Lend(MaxHeaderLen + n)
	if token == 0 {
		b = s.scratch
	}
	hl := o.Emit(b)
	if n > 0 {
		buf.peek(off, b[hl:hl+n])
		s.charge(hw.CostCopyByte, n)
	}
	seg := b[:hl+n]
	sum := s.out.PseudoHeaderSum(id.localAddr, id.remoteAddr, len(seg))
	if s.cfg.ChecksumOffloadTx {
		SetPseudoChecksum(seg, sum)
	} else {
		SetChecksum(seg, sum)
		s.charge(hw.CostChecksumByte, len(seg))
	}
	s.stats.OutSegs++
	s.charge(CostSegmentTx, 1)
	var err error
	if token != 0 {
		err = s.out.SendLent(now, id.localAddr, id.remoteAddr, token, len(seg))
	} else {
		err = s.out.SendSegment(now, id.localAddr, id.remoteAddr, seg)
	}
	if err != nil {
		s.stats.Drops.Output++
	}
}

// challengeAllowed applies the limits of a challenge ACK in Linux's
// order (tcp_send_challenge_ack): first the connection's own limit on
// ACKs to invalid segments (Config.InvalidRateLimit, counted in
// ack_skipped_challenge), then the stack's RFC 5961 section 7 limit.
func (c *Conn) challengeAllowed(now time.Duration) bool {
	if c.oowLimited(now, &c.s.stats.AckSkippedChallenge) {
		return false
	}
	return c.s.challengeAllowed(now)
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
		it := s.dirty[i]
		s.dirty[i] = pollItem{}
		if it.c == nil {
			s.sendFinalRST(now, it.id, it.rstSeq)
			continue
		}
		c := it.c
		c.dirtyAt = 0
		if s.flushHook != nil {
			s.flushHook(c)
		}
		// Queued writes, closes and window updates; one that ended
		// since it was queued sends nothing (output is a no-op in
		// CLOSED).
		c.output(now)
		s.afterConn(now, c)
		if s.flushHook != nil {
			s.flushHook(nil)
		}
	}
	s.dirty = s.dirty[:0]
	// A connection that ends leaves the heap (removeConn), so every
	// one popped is alive.
	for len(s.timers) > 0 && s.timers[0].at <= now {
		c := s.timers.remove(0)
		c.onTimers(now)
		s.afterConn(now, c)
	}
	if len(s.timers) == 0 {
		return NoDeadline
	}
	return s.timers[0].at
}

// markDirty queues c for flush at the next Poll.
func (s *Stack) markDirty(c *Conn) {
	if c.dirtyAt == 0 {
		s.dirty = append(s.dirty, pollItem{c: c})
		c.dirtyAt = int32(len(s.dirty))
	}
}

// afterConn updates c's place in the timer heap after it ran. The heap
// key is kept lazily: it only moves earlier; a conn popped early just
// finds no timer due and is pushed back at its real deadline. A
// connection that ended has no timer armed (removeConn stopped them), so
// it is never pushed back.
func (s *Stack) afterConn(now time.Duration, c *Conn) {
	c.syncRcvPromise()
	d, ok := c.nextDeadline()
	if !ok {
		return
	}
	if c.heapIdx < 0 {
		s.timers.push(c, d)
	} else if d < s.timers[c.heapIdx].at {
		s.timers.earlier(int(c.heapIdx), d)
	}
}

// connHeap is a min-heap of connections by their (lazy) timer deadline,
// then creation order (a deterministic tie-break). Each entry carries
// its keys, so that sifting through a heap of a million connections
// compares entries in one array instead of loading two connections'
// cache lines per comparison; only a move writes the connection's index.
// Keys are unique (seqNo is), so the order connections pop in does not
// depend on how the heap sifts.
type connHeap []heapEntry

// heapEntry is one connection in the heap, with its keys.
type heapEntry struct {
	at  time.Duration
	seq uint64
	c   *Conn
}

func (e *heapEntry) less(o *heapEntry) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// set puts e at i and tells its connection.
func (h connHeap) set(i int, e heapEntry) {
	h[i] = e
	e.c.heapIdx = int32(i)
}

func (h connHeap) up(i int) {
	e := h[i]
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(&h[p]) {
			break
		}
		h.set(i, h[p])
		i = p
	}
	h.set(i, e)
}

// down sifts the entry at i down; it reports whether it moved.
func (h connHeap) down(i int) bool {
	e, start, n := h[i], i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&e) {
			break
		}
		h.set(i, h[m])
		i = m
	}
	h.set(i, e)
	return i > start
}

// push adds c with deadline at.
func (h *connHeap) push(c *Conn, at time.Duration) {
	*h = append(*h, heapEntry{at: at, seq: c.seqNo, c: c})
	h.up(len(*h) - 1)
}

// remove takes out the entry at i and returns its connection.
func (h *connHeap) remove(i int) *Conn {
	old := *h
	n := len(old) - 1
	c := old[i].c
	if i != n {
		old.set(i, old[n])
	}
	old[n] = heapEntry{}
	*h = old[:n]
	if i != n && !h.down(i) {
		h.up(i)
	}
	c.heapIdx = -1
	if n >= minHeapShrink && n < cap(old)/4 {
		// A SYN storm's timers are gone: give back most of the array
		// (entries keep their indices, so no connection is told).
		*h = append(make(connHeap, 0, cap(old)/2), (*h)...)
	}
	return c
}

// minHeapShrink is the fewest entries at which the heap's array is
// shrunk, so that a small heap never reallocates back and forth.
const minHeapShrink = 1024

// earlier moves the entry at i to the earlier deadline at.
func (h connHeap) earlier(i int, at time.Duration) {
	h[i].at = at
	h.up(i)
}
