package nic

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/savanna-sim/savanna/sim"
)

// Ethernet framing on the wire (IEEE 802.3 clause 4.4.2 and 3.1.1): a
// frame shorter than 64 bytes (FCS included) is padded to 64, and every
// frame is preceded by 7 bytes of preamble and 1 of start-of-frame
// delimiter and followed by at least 12 bytes of inter-frame gap.
const (
	fcsLen         = 4
	minFrameOnWire = 64
	preambleSFD    = 8
	interFrameGap  = 12
	// WireOverhead is the bytes a frame costs on the wire beyond its
	// FCS-included length: preamble, SFD and inter-frame gap.
	WireOverhead = preambleSFD + interFrameGap
)

// WireBytes returns the bytes a frame of n bytes (as an mbuf holds it,
// without FCS) occupies on the wire: max(n+4, 64) + 20.
func WireBytes(n int) int { return max(n+fcsLen, minFrameOnWire) + WireOverhead }

// endpoint is what sits at one end of a link: a NIC port or a switch
// port.
type endpoint interface {
	// receive takes a frame that has fully arrived at now. data is only
	// valid during the call. badFCS says the frame's FCS does not match.
	receive(data []byte, now time.Duration, badFCS bool)
	// attach connects the endpoint to its link end.
	attach(d *linkDir) error
	// speedMbps is the endpoint's own speed, 0 if it follows the link.
	speedMbps() int
	// endpointName names the endpoint for errors.
	endpointName() string
	// active reports whether the endpoint drives its side of the link:
	// a stopped port has no carrier, so its peer sees the link down.
	active() bool
}

// inflight is one frame on the wire: its bytes and what the far end will
// make of it.
type inflight struct {
	buf     []byte // capacity reused across frames
	n       int
	arrival time.Duration
	gen     uint64 // link generation when sent: a flap in between loses it
	badFCS  bool
}

// headEvent is the arg of the event that delivers the head of a link
// direction's in-order FIFO; other args are slots of held-back frames.
const headEvent = 1 << 63

// linkDir is one direction of a link. It serializes frames in FIFO order
// at the link's rate and schedules their arrival; in-flight frames live in
// slots reused across frames, and the arrival event carries the slot
// index, so a frame costs no allocation in steady state.
type linkDir struct {
	link  *Link
	from  endpoint
	to    endpoint
	index int

	wireFreePS  int64 // when the wire is free, in picoseconds
	lastLen     int   // serialization of the last frame size seen
	lastPS      int64
	lastArrival time.Duration // latest in-order arrival scheduled

	slots []inflight
	free  []int32
	// fifo holds the slots of in-order frames by arrival; only its
	// head has an event in the engine's queue (headArmed), which keeps
	// the queue small however many frames are on the wire.
	fifo      queue[int32]
	headArmed bool
	stats     LinkDirStats
}

// serializationPS returns the time a frame of n bytes (without FCS)
// occupies the wire, in picoseconds.
func (d *linkDir) serializationPS(n int) int64 {
	// Frames of one size tend to follow each other: skip the division.
	if n != d.lastLen || d.lastPS == 0 {
		d.lastLen = n
		d.lastPS = int64(WireBytes(n)) * 8 * 1_000_000_000_000 / d.link.bps
	}
	return d.lastPS
}

// backlog returns how long the wire is booked beyond now: the backlog a
// sender's queue holds, as time.
func (d *linkDir) backlog(now time.Duration) time.Duration {
	b := d.wireFreePS - int64(now)*1000
	if b <= 0 {
		return 0
	}
	return time.Duration(b / 1000)
}

// up reports whether frames can be sent: the link is up and the far end
// has carrier.
func (d *linkDir) up() bool { return d.link.isUp() && d.to.active() }

// reserve returns a slot whose buffer holds n bytes, for the sender to
// fill before commit.
func (d *linkDir) reserve(n int) (int32, []byte) {
	var s int32
	if k := len(d.free); k > 0 {
		s = d.free[k-1]
		d.free = d.free[:k-1]
	} else {
		d.slots = append(d.slots, inflight{})
		s = int32(len(d.slots) - 1)
	}
	sl := &d.slots[s]
	if cap(sl.buf) < n {
		sl.buf = make([]byte, n, max(n, 2048))
	}
	sl.buf = sl.buf[:n]
	sl.n = n
	return s, sl.buf
}

func (d *linkDir) release(s int32) { d.free = append(d.free, s) }

// commit puts the frame in slot s on the wire at now (or when the wire is
// free, if later), applies the link's impairments and schedules its
// arrival. It returns when the last bit leaves (the sender's descriptor
// is done then) and when the first bit left.
func (d *linkDir) commit(s int32, now time.Duration) (start, done time.Duration) {
	l := d.link
	sl := &d.slots[s]
	startPS := max(int64(now)*1000, d.wireFreePS)
	endPS := startPS + d.serializationPS(sl.n)
	d.wireFreePS = endPS
	start = time.Duration(startPS / 1000)
	done = ceilNS(endPS)
	d.stats.Frames++
	d.stats.Bytes += uint64(sl.n)
	sl.gen = l.gen
	sl.badFCS = false
	imp := &l.imp
	rng := l.rng
	if imp.Loss > 0 && rng.Float64() < imp.Loss {
		d.stats.Lost++
		d.release(s)
		return start, done
	}
	arrival := done + imp.Latency
	if imp.Jitter > 0 {
		arrival += time.Duration(rng.Int64N(int64(imp.Jitter) + 1))
	}
	inOrder := true
	if imp.Reorder > 0 && rng.Float64() < imp.Reorder {
		inOrder = false
		// Held back: later frames may overtake it. It does not move
		// the in-order floor.
		arrival += l.reorderDelay
		d.stats.Reordered++
	} else {
		// Jitter alone never reorders a link's frames.
		arrival = max(arrival, d.lastArrival)
		d.lastArrival = arrival
	}
	if imp.Corrupt > 0 && rng.Float64() < imp.Corrupt && flipBits(sl.buf[:sl.n], rng) {
		d.stats.Corrupted++
	}
	if imp.CRCErrors > 0 && rng.Float64() < imp.CRCErrors {
		sl.badFCS = true
		d.stats.CRCErrors++
	}
	sl.arrival = arrival
	d.schedule(s, inOrder)
	if imp.Duplicate > 0 && rng.Float64() < imp.Duplicate {
		s2, buf := d.reserve(sl.n)
		sl = &d.slots[s] // reserve may have moved the slots
		copy(buf, sl.buf[:sl.n])
		d.slots[s2].gen, d.slots[s2].badFCS, d.slots[s2].arrival = sl.gen, sl.badFCS, sl.arrival
		d.stats.Duplicated++
		d.schedule(s2, inOrder)
	}
	return start, done
}

// schedule arranges the arrival of slot s: in-order frames join the
// FIFO, held-back frames get their own event.
func (d *linkDir) schedule(s int32, inOrder bool) {
	if !inOrder {
		d.link.eng.At(d.slots[s].arrival, d, uint64(s))
		return
	}
	d.fifo.push(s)
	if !d.headArmed {
		d.headArmed = true
		d.link.eng.At(d.slots[s].arrival, d, headEvent)
	}
}

// send copies data into a slot and commits it: the path of a switch,
// whose frames are bytes, not mbufs.
func (d *linkDir) send(data []byte, now time.Duration) {
	s, buf := d.reserve(len(data))
	copy(buf, data)
	d.commit(s, now)
}

// Fire implements sim.Handler: the head of the FIFO (and every frame
// behind it due by now) has arrived, or the held-back frame in slot arg.
func (d *linkDir) Fire(e *sim.Engine, arg uint64) {
	if arg != headEvent {
		d.deliver(int32(arg), e.Now())
		return
	}
	now := e.Now()
	for d.fifo.len() > 0 && d.slots[d.fifo.peek()].arrival <= now {
		d.deliver(d.fifo.pop(), now)
	}
	if d.fifo.len() > 0 {
		e.At(d.slots[d.fifo.peek()].arrival, d, headEvent)
	} else {
		d.headArmed = false
	}
}

// deliver hands the frame in slot s to the far end, unless the link went
// down while it was on the wire.
func (d *linkDir) deliver(s int32, now time.Duration) {
	sl := &d.slots[s]
	if !d.link.isUp() || sl.gen != d.link.gen {
		d.stats.DroppedLinkDown++
		d.release(s)
		return
	}
	d.stats.Delivered++
	d.to.receive(sl.buf[:sl.n], now, sl.badFCS)
	d.release(s)
}

// flipBits flips one random bit of frame after its Ethernet
// header, where the receiver's IP or transport checksum can see them. It
// reports whether it flipped any (a frame of only a header has none to
// flip).
func flipBits(frame []byte, rng *rand.Rand) bool {
	body := len(frame) - ethHeaderLen
	if body <= 0 {
		return false
	}
	// One bit: the Internet checksum (RFC 1071) detects every single-bit
	// error, so a corrupted frame is always caught by the receiver's IP or
	// L4 checksum, as the corrupt key promises. Flips of two bits can
	// cancel in a one's-complement sum and pass unseen (Stone and
	// Partridge, SIGCOMM 2000): a model of that would need its own key.
	bit := rng.IntN(body * 8)
	frame[ethHeaderLen+bit/8] ^= 1 << (bit % 8)
	return true
}

// ceilNS converts picoseconds to nanoseconds, rounding up: a frame has
// arrived only when its last bit has.
func ceilNS(ps int64) time.Duration { return time.Duration((ps + 999) / 1000) }

// LinkDirStats count one direction of a link.
type LinkDirStats struct {
	// Frames and Bytes put on the wire (bytes as mbufs hold them,
	// without FCS).
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
	// Delivered counts frames handed to the far end, duplicates
	// included.
	Delivered uint64 `json:"delivered"`
	Lost      uint64 `json:"lost"`
	// Duplicated counts extra copies delivered.
	Duplicated uint64 `json:"duplicated"`
	Reordered  uint64 `json:"reordered"`
	// Corrupted counts frames whose bits were flipped (the receiver's
	// checksums catch them); CRCErrors frames sent with a bad FCS (the
	// receiving NIC drops them).
	Corrupted uint64 `json:"corrupted"`
	CRCErrors uint64 `json:"crc_errors"`
	// DroppedLinkDown counts frames on the wire when the link went
	// down.
	DroppedLinkDown uint64 `json:"dropped_link_down"`
}

func (s *LinkDirStats) add(o LinkDirStats) {
	s.Frames += o.Frames
	s.Bytes += o.Bytes
	s.Delivered += o.Delivered
	s.Lost += o.Lost
	s.Duplicated += o.Duplicated
	s.Reordered += o.Reordered
	s.Corrupted += o.Corrupted
	s.CRCErrors += o.CRCErrors
	s.DroppedLinkDown += o.DroppedLinkDown
}

// LinkStats are a link's counters: both directions summed, and each
// direction (AToB from Ends[0] to Ends[1]).
type LinkStats struct {
	LinkDirStats
	AToB LinkDirStats `json:"a_to_b"`
	BToA LinkDirStats `json:"b_to_a"`
	// Flaps counts transitions to down; DownTime the time spent down.
	Flaps    uint64        `json:"flaps"`
	DownTime time.Duration `json:"down_time_ns"`
	Up       bool          `json:"up"`
}

// Link is a full-duplex point-to-point link between two endpoints (NIC
// ports or switch ports) with seeded impairments.
type Link struct {
	name string
	eng  *sim.Engine
	rng  *rand.Rand
	bps  int64
	imp  LinkConfig
	dirs [2]linkDir

	reorderDelay time.Duration
	adminDown    bool
	flapDepth    int
	gen          uint64 // bumped when the link goes down
	downSince    time.Duration
	flaps        uint64
	downTime     time.Duration
	flapDone     []int // repetitions done, per flap
	flapTimer    flapHandler
}

// NewLink connects a and b (each a *Port or a *SwitchPort) with a link
// configured by cfg, whose randomness comes from the engine's stream
// "link:"+name. The link's rate is cfg.Bandwidth, else the slower port's
// speed. Flaps in cfg are scheduled from now.
func NewLink(eng *sim.Engine, name string, a, b Endpoint, cfg LinkConfig) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("link %q: %w", name, err)
	}
	if a == nil || b == nil {
		return nil, fmt.Errorf("link %q: missing end", name)
	}
	ea, eb := a.(endpoint), b.(endpoint)
	l := &Link{name: name, eng: eng, rng: eng.RNG("link:" + name), imp: cfg}
	bps, _ := ParseBandwidth(cfg.Bandwidth)
	if bps == 0 {
		sa, sb := ea.speedMbps(), eb.speedMbps()
		switch {
		case sa > 0 && sb > 0:
			bps = int64(min(sa, sb)) * 1_000_000
		case sa > 0 || sb > 0:
			bps = int64(max(sa, sb)) * 1_000_000
		default:
			return nil, fmt.Errorf("link %q: bandwidth: neither %s nor %s has a speed; set bandwidth", name, ea.endpointName(), eb.endpointName())
		}
	}
	l.bps = bps
	l.reorderDelay = cfg.ReorderDelay
	if l.reorderDelay == 0 {
		l.reorderDelay = max(2*cfg.Latency, time.Microsecond)
	}
	l.dirs[0] = linkDir{link: l, from: ea, to: eb, index: 0}
	l.dirs[1] = linkDir{link: l, from: eb, to: ea, index: 1}
	if err := ea.attach(&l.dirs[0]); err != nil {
		return nil, fmt.Errorf("link %q: %w", name, err)
	}
	if err := eb.attach(&l.dirs[1]); err != nil {
		return nil, fmt.Errorf("link %q: %w", name, err)
	}
	l.flapTimer = flapHandler{l}
	l.flapDone = make([]int, len(cfg.Flaps))
	now := eng.Now()
	for i, f := range cfg.Flaps {
		eng.At(now+f.At, &l.flapTimer, uint64(i)<<1)
	}
	return l, nil
}

// Name returns the link's name.
func (l *Link) Name() string { return l.name }

// BitsPerSecond returns the link's rate.
func (l *Link) BitsPerSecond() int64 { return l.bps }

func (l *Link) isUp() bool { return !l.adminDown && l.flapDepth == 0 }

// Up reports whether the link carries frames.
func (l *Link) Up() bool { return l.isUp() }

// SetUp sets the link administratively up or down, as a scenario's
// link_up and link_down events do. Frames on the wire when it goes down
// are lost (counted in dropped_link_down).
func (l *Link) SetUp(up bool) {
	was := l.isUp()
	l.adminDown = !up
	l.transition(was)
}

// transition accounts for a change of state from was.
func (l *Link) transition(was bool) {
	now := l.eng.Now()
	switch is := l.isUp(); {
	case was && !is:
		l.gen++
		l.flaps++
		l.downSince = now
	case !was && is:
		l.downTime += now - l.downSince
	}
}

// flapHandler runs the flap schedule: arg is flap index << 1 | 1 for
// "up again", | 0 for "go down".
type flapHandler struct{ l *Link }

// Fire implements sim.Handler.
func (h *flapHandler) Fire(e *sim.Engine, arg uint64) {
	l := h.l
	i := int(arg >> 1)
	f := l.imp.Flaps[i]
	was := l.isUp()
	if arg&1 == 0 {
		l.flapDepth++
		l.transition(was)
		e.After(f.DownFor, h, arg|1)
		return
	}
	l.flapDepth--
	l.transition(was)
	l.flapDone[i]++
	if f.Every > 0 && (f.Count == 0 || l.flapDone[i] < f.Count) {
		// The next flap starts Every after the previous one started.
		e.After(max(0, f.Every-f.DownFor), h, uint64(i)<<1)
	}
}

// Stats returns the link's counters.
func (l *Link) Stats() LinkStats {
	s := LinkStats{AToB: l.dirs[0].stats, BToA: l.dirs[1].stats, Flaps: l.flaps, DownTime: l.downTime, Up: l.isUp()}
	if !s.Up {
		s.DownTime += l.eng.Now() - l.downSince
	}
	s.LinkDirStats.add(s.AToB)
	s.LinkDirStats.add(s.BToA)
	return s
}

// ResetStats starts a new measurement window at the engine's current
// time, as the end of a warm-up does. The rule: counters (frames and
// bytes sent, delivered, lost, duplicated, reordered, corrupted, sent
// with a bad FCS or dropped by a link down, flaps, time spent down) go
// to zero; gauges (whether the link is up) keep their value. A link down
// at the reset counts its down time from the reset on, so that DownTime
// stays within the window. Frames on the wire stay there and count as
// delivered (or dropped) in the new window when they arrive; the flap
// schedule is configuration and goes on.
func (l *Link) ResetStats() {
	for i := range l.dirs {
		l.dirs[i].stats = LinkDirStats{}
	}
	l.flaps, l.downTime = 0, 0
	if !l.isUp() {
		l.downSince = l.eng.Now()
	}
}

// Endpoint is a *Port or a *SwitchPort: something a link can connect.
type Endpoint interface {
	endpoint
}
