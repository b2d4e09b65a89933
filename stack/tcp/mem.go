package tcp

import "sync/atomic"

// MemLimits are the thresholds of a memory budget for TCP buffers in
// bytes, in the shape of Linux's net.ipv4.tcp_mem (low, pressure, high;
// Linux counts pages, this engine bytes). Below Pressure the budget is
// normal. Above Pressure it is under pressure until the bytes held fall
// back to Low (Linux's tcp_enter_memory_pressure and
// sk_leave_memory_pressure in __sk_mem_raise_allocated). Above High
// nothing grows that the stack is not obliged to hold.
type MemLimits struct {
	Low      int64
	Pressure int64
	High     int64
}

// DefaultMemLimits are Linux's tcp_mem for a host of 32 GiB: tcp_init_mem
// sets pressure to 1/16 of the free buffer pages, low to 3/4 of that and
// high to twice low (1.5 GiB, 2 GiB, 3 GiB).
func DefaultMemLimits() MemLimits {
	return MemLimits{Low: 1536 << 20, Pressure: 2 << 30, High: 3 << 30}
}

// memState is the budget's state as the stacks act on it.
type memState uint8

const (
	memNormal   memState = iota // below pressure
	memPressure                 // entered above Pressure, not yet back at Low
	memOverHigh                 // above High
)

// MemBudget is the memory that the buffers of the stacks of one process
// hold, against one set of MemLimits: Linux's tcp_memory_allocated
// against tcp_mem, shared by every socket of the host. Like ConnBudget it
// is shared by the stacks of a process (one per lcore) and is safe for
// concurrent use; between one stack's check and its charge another may
// charge too, so under real-time load the thresholds can be passed by
// what the lcores charge at the same moment (one buffer growth each).
//
// It counts two amounts. InUse is the capacity of the send and receive
// buffers allocated (a buffer grows on demand, so an idle connection holds
// a few hundred bytes or none). Promised is the receive window the stacks
// advertised beyond what their buffers already hold: memory a peer may
// make them allocate without asking again. A stack offers a window only
// while InUse + Promised stays within High (and at least 64 KiB, the
// handshake's window, while the budget is normal), so that an honest peer
// is never dropped for memory: the bytes held stay within High plus a
// window of 64 KiB per connection (docs/tcp.md, "Memory pressure").
type MemBudget struct {
	lim      MemLimits
	inUse    atomic.Int64
	peak     atomic.Int64
	promised atomic.Int64
	pressure atomic.Bool
	entries  atomic.Uint64
}

// NewMemBudget returns an empty budget with the given thresholds, which
// Config.Validate checks (key tcp_mem).
func NewMemBudget(lim MemLimits) *MemBudget { return &MemBudget{lim: lim} }

// MemBudgetStats are a budget's figures.
type MemBudgetStats struct {
	// InUse is the buffer capacity held now; Peak the most held since
	// the budget was made.
	InUse int64 `json:"in_use_bytes"`
	Peak  int64 `json:"peak_bytes"`
	// Promised is the advertised receive window not yet backed by
	// allocated buffers.
	Promised int64 `json:"promised_bytes"`
	// UnderPressure tells whether the budget is under pressure now;
	// PressureEntries counts the times it entered pressure.
	UnderPressure   bool   `json:"under_pressure"`
	PressureEntries uint64 `json:"pressure_entries"`
}

// Stats returns a snapshot of the budget's figures.
func (b *MemBudget) Stats() MemBudgetStats {
	return MemBudgetStats{InUse: b.inUse.Load(), Peak: b.peak.Load(), Promised: b.promised.Load(),
		UnderPressure: b.pressure.Load(), PressureEntries: b.entries.Load()}
}

// Limits returns the thresholds.
func (b *MemBudget) Limits() MemLimits { return b.lim }

// add charges d bytes (negative: frees them) and moves the pressure
// state as Linux does: entered when the bytes held pass Pressure, left
// when they are back at or below Low. It reports whether this charge
// entered pressure.
func (b *MemBudget) add(d int64) bool {
	v := b.inUse.Add(d)
	if d > 0 {
		for p := b.peak.Load(); v > p && !b.peak.CompareAndSwap(p, v); p = b.peak.Load() {
		}
	}
	switch {
	case v > b.lim.Pressure:
		if !b.pressure.Load() && b.pressure.CompareAndSwap(false, true) {
			b.entries.Add(1)
			return true
		}
	case v <= b.lim.Low:
		if b.pressure.Load() {
			b.pressure.Store(false)
		}
	}
	return false
}

// state is the budget's state now.
func (b *MemBudget) state() memState {
	switch {
	case b.inUse.Load() > b.lim.High:
		return memOverHigh
	case b.pressure.Load():
		return memPressure
	}
	return memNormal
}

// headroom is what may still be promised or allocated before High, not
// counting mine (a connection's own promise, which it is replacing).
func (b *MemBudget) headroom(mine int64) int64 {
	return b.lim.High - b.inUse.Load() - (b.promised.Load() - mine)
}

// The guarantees a connection keeps whatever the budget's state, so that
// it can make progress (Linux's "guarantee minimum buffer size under
// pressure" in __sk_mem_raise_allocated).
const (
	// memNormalWindow is the window a connection may always offer while
	// the budget is normal: the largest a SYN can carry (RFC 7323 section
	// 2.2), so the budget never shrinks a handshake's window.
	memNormalWindow = 0xffff
	// memPressureSegs is the window, in segments beyond the memory a
	// connection's receive buffer already holds, that it may offer
	// under pressure: Linux's tcp_adjust_rcv_ssthresh clamps
	// rcv_ssthresh to 4 * advmss there.
	memPressureSegs = 4
	// memPressureSndBuf is the send buffer capacity a connection may
	// still reach under pressure: Linux's tcp_wmem[0] (4096), the
	// send-side minimum it guarantees.
	memPressureSndBuf = 4096
)

// memAcct is a stack's share of its budget: what its buffers hold, for
// its own counters (MemInUse, MemPeak) and for the budget. Only the
// stack's lcore touches it.
type memAcct struct {
	budget *MemBudget
	stats  *Stats
}

// add charges d bytes of buffer capacity.
func (a *memAcct) add(d int) {
	if d == 0 {
		return
	}
	a.stats.MemInUse += int64(d)
	if a.stats.MemInUse > a.stats.MemPeak {
		a.stats.MemPeak = a.stats.MemInUse
	}
	if a.budget.add(int64(d)) {
		a.stats.MemPressureEntries++
	}
}

// SetMemBudget makes the stack count its buffers against b, shared with
// the other stacks of the process, instead of the budget of its own that
// New made from Config.Mem. Set it before the first connection.
func (s *Stack) SetMemBudget(b *MemBudget) {
	if b != nil {
		s.mem.budget = b
	}
}

// MemBudget returns the budget the stack counts its buffers against.
func (s *Stack) MemBudget() *MemBudget { return s.mem.budget }

// acceptsData reports whether c may still receive data, so that a window
// it advertised is a promise of memory.
func (c *Conn) acceptsData() bool {
	switch c.state {
	case StateSynReceived, StateEstablished, StateFinWait1, StateFinWait2:
		return !c.finRcvd
	}
	return false
}

// rcvWindowMax is the largest receive window the budget lets c offer
// now, in bytes (before the buffer's own free space bounds it).
// Normal: what the buffer already holds free plus the budget's headroom,
// at least memNormalWindow. Under pressure: the free capacity plus
// memPressureSegs segments. Over High: the free capacity only.
func (c *Conn) rcvWindowMax() int {
	b := c.s.mem.budget
	room := len(c.rcvBuf.buf) - c.rcvBuf.length()
	switch b.state() {
	case memNormal:
		w := int64(room) + max(b.headroom(c.rcvPromise), 0)
		return int(max(w, memNormalWindow))
	case memPressure:
		return room + memPressureSegs*int(c.advMSS)
	}
	return room
}

// rcvOfferEdge is the right edge of the window c would offer now: the
// free receive buffer as the budget allows it.
func (c *Conn) rcvOfferEdge() Seq {
	return c.rcvNxt.Add(minInt(c.rcvBuf.free(), c.rcvWindowMax()))
}

// syncRcvPromise tells the budget how much of c's advertised window its
// receive buffer cannot yet hold (0 once c receives no more data).
func (c *Conn) syncRcvPromise() {
	var p int64
	if c.acceptsData() && c.state != StateClosed {
		w := c.rcvAdvEdge.Sub(c.rcvNxt)
		if w > 0 {
			p = max(int64(c.rcvBuf.length()+w-len(c.rcvBuf.buf)), 0)
		}
	}
	if d := p - c.rcvPromise; d != 0 {
		c.s.mem.budget.promised.Add(d)
		c.rcvPromise = p
	}
}

// sndRoom returns how many of n bytes a Write may add to c's send buffer
// by the budget, growing the buffer as far as the budget lets it.
// Normal: the growth the buffer would make, if it keeps the bytes held
// within High. Under pressure the buffer grows no more, but to
// memPressureSndBuf; over High it does not grow (beyond the first
// ringInitial bytes Write has already given it).
func (c *Conn) sndRoom(n int) int {
	r := &c.sndBuf
	need := r.length() + n
	if need <= len(r.buf) {
		return n
	}
	b := c.s.mem.budget
	st := b.state()
	if st == memNormal {
		if int64(r.growTarget(need)-len(r.buf)) <= b.lim.High-b.inUse.Load() {
			return n
		}
		st = memPressure
	}
	limit := len(r.buf)
	if st == memPressure && limit < memPressureSndBuf {
		limit = minInt(memPressureSndBuf, int(r.limit))
	}
	if limit > len(r.buf) {
		r.grow(limit)
	}
	return maxInt(minInt(n, limit-r.length()), 0)
}
