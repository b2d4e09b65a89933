package sim

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
)

// Never is a deadline that does not come.
const Never = hw.NoDeadline

// Poller is work that runs on a core in turns: a DPDK lcore's poll loop, a
// stack instance, an application's event loop. Each turn it does what it
// can, charging its work to m, and says whether it did anything and when
// it next needs to run if nothing else wakes it.
type Poller interface {
	Poll(m hw.Meter) (worked bool, next time.Duration)
}

// Prices gives the cost of each operation in picoseconds per unit, for one
// core clock rate. sim/cost builds it from a cost-model file.
type Prices [hw.NumCostOps]int64

// CoreStats is what a core did.
type CoreStats struct {
	// Busy is time spent on charged work, by CPU mode.
	User, Kernel time.Duration
	// Idle is time the core had nothing to do. On a spinning (poll-mode)
	// core this time is still burnt polling; Spinning says so.
	Idle     time.Duration
	Spinning bool
	// Turns counts poll-loop turns; IdleTurns those that found nothing.
	Turns, IdleTurns uint64
	// Ops counts each operation charged.
	Ops [hw.NumCostOps]int64
}

// Core is a simulated CPU (an lcore). Work runs on it in turns; each turn
// makes the core busy for the price of what was charged, and the next turn
// cannot start before that. A core implements hw.Meter for the code it
// runs.
type Core struct {
	// ID is the CPU number on its machine; Node its NUMA node.
	ID, Node int

	eng     *Engine
	prices  *Prices
	spins   bool
	pollers []Poller
	turn    *Timer

	busyUntil time.Duration
	inTurn    bool
	again     bool
	turnStart time.Duration
	chargedPS [2]int64 // this turn, by mode
	idled     time.Duration

	statsSince time.Duration
	stats      CoreStats
}

// NewCore returns an idle core. A spinning core is a DPDK poll-mode lcore:
// every idle turn costs hw.CostPollIdle and its idle time is spent
// spinning. A non-spinning core sleeps until woken.
func NewCore(e *Engine, id, node int, prices *Prices, spins bool) *Core {
	c := &Core{ID: id, Node: node, eng: e, prices: prices, spins: spins}
	c.turn = NewTimer(e, c, 0)
	c.stats.Spinning = spins
	return c
}

// Attach adds a poller to the core and wakes the core now.
func (c *Core) Attach(p Poller) {
	c.pollers = append(c.pollers, p)
	c.Wake(c.eng.Now())
}

// Wake asks for a turn at time at (or as soon after as the core is free):
// a doorbell from a NIC queue, a ring, a device.
func (c *Core) Wake(at time.Duration) {
	if c.inTurn {
		c.again = true
		return
	}
	c.turn.ResetEarlier(max(at, c.busyUntil, c.eng.Now()))
}

// Now implements hw.Meter: engine time plus what the running turn has
// charged so far.
func (c *Core) Now() time.Duration {
	if !c.inTurn {
		return max(c.eng.Now(), c.busyUntil)
	}
	return c.turnStart + time.Duration((c.chargedPS[0]+c.chargedPS[1])/1000) + c.idled
}

// Charge implements hw.Meter.
func (c *Core) Charge(op hw.CostOp, count int64) {
	if int(op) >= hw.NumCostOps || count <= 0 {
		return
	}
	c.stats.Ops[op] += count
	c.chargedPS[op.Mode()] += c.prices[op] * count
}

// Idle implements hw.Meter: the running work waits d without using the
// core.
func (c *Core) Idle(d time.Duration) {
	if d > 0 {
		c.idled += d
	}
}

// Fire implements Handler: one turn of every poller.
func (c *Core) Fire(e *Engine, _ uint64) {
	c.inTurn, c.again = true, false
	c.turnStart = e.Now()
	c.chargedPS = [2]int64{}
	c.idled = 0
	worked := false
	next := Never
	for _, p := range c.pollers {
		w, n := p.Poll(c)
		worked = worked || w
		next = min(next, n)
	}
	c.stats.Turns++
	if !worked {
		c.stats.IdleTurns++
		if c.spins {
			c.Charge(hw.CostPollIdle, 1)
		}
	}
	end := c.Now()
	c.inTurn = false
	c.account(end)
	c.busyUntil = end
	switch {
	case worked || c.again:
		c.turn.Reset(end)
	case next != Never:
		c.turn.Reset(max(next, end))
	}
}

// account adds a turn's charged time to the statistics, unless the turn
// ended before the measurement window began. Idle time is derived from
// the window in Stats.
func (c *Core) account(end time.Duration) {
	if end <= c.statsSince {
		return
	}
	c.stats.User += time.Duration(c.chargedPS[hw.ModeUser] / 1000)
	c.stats.Kernel += time.Duration(c.chargedPS[hw.ModeKernel] / 1000)
}

// ResetStats starts a new measurement window at the current time, as the
// end of a warm-up does.
func (c *Core) ResetStats() {
	c.statsSince = c.eng.Now()
	c.stats = CoreStats{Spinning: c.spins}
}

// Stats returns what the core did since the last ResetStats. Idle is the
// time of the window not spent on charged work.
func (c *Core) Stats() CoreStats {
	s := c.stats
	window := c.eng.Now() - c.statsSince
	s.Idle = max(0, window-s.User-s.Kernel)
	return s
}

// Utilisation returns the share of the window spent on charged work, from
// 0 to 1 (a spinning core's polling is not counted as work).
func (s CoreStats) Utilisation(window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(s.User+s.Kernel) / float64(window)
}
