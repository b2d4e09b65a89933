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

// LayerIdlePoll is the layer charged for the idle turns of a spinning
// core: polling that found nothing.
const LayerIdlePoll = "idle_poll"

// layerDefault is the layer of pollers attached without one.
const layerDefault = "work"

// OpStat is what one operation cost a core: how many units were charged
// and their price in picoseconds, summed.
type OpStat struct {
	Count int64
	PS    int64
}

// LayerStats is the work one layer charged to a core, by operation.
type LayerStats struct {
	// Layer names who charged: "driver", "stack", an app's name, an
	// app's "name;zlibshim" ... (semicolons nest, as in folded stacks).
	Layer string
	Ops   [hw.NumCostOps]OpStat
}

// CoreStats is what a core did.
type CoreStats struct {
	// Busy is time spent on charged work, by CPU mode. It is the sum of
	// the layers' picoseconds, truncated to nanoseconds; UserPS and
	// KernelPS are the exact sums.
	User, Kernel     time.Duration
	UserPS, KernelPS int64
	// Idle is time the core had nothing to do. On a spinning (poll-mode)
	// core this time is still burnt polling; Spinning says so.
	Idle     time.Duration
	Spinning bool
	// Turns counts poll-loop turns; IdleTurns those that found nothing.
	Turns, IdleTurns uint64
	// Ops counts each operation charged, over all layers.
	Ops [hw.NumCostOps]int64
	// SiblingPS is the work charged while an SMT sibling was busy, at the
	// shared rate (SetSiblings); SiblingExtraPS the part of it the
	// sharing added. Both are within UserPS+KernelPS.
	SiblingPS, SiblingExtraPS int64
	// Layers is the charged work by layer and operation, in the order
	// the layers were first named on the core. Every picosecond of
	// UserPS+KernelPS is in exactly one layer's operation.
	Layers []LayerStats
}

// BusyPS is the charged work of the window in picoseconds.
func (s CoreStats) BusyPS() int64 { return s.UserPS + s.KernelPS }

// Core is a simulated CPU (an lcore). Work runs on it in turns; each turn
// makes the core busy for the price of what was charged, and the next turn
// cannot start before that. A core implements hw.Meter for the code it
// runs; Meter gives views of it that attribute charges to a layer.
type Core struct {
	// ID is the CPU number on its machine; Node its NUMA node.
	ID, Node int

	eng     *Engine
	prices  *Prices
	spins   bool
	pollers []attached
	turn    *Timer

	busyUntil time.Duration
	inTurn    bool
	again     bool
	turnStart time.Duration
	// turnPS is what the running turn has charged; carryPS the
	// sub-nanosecond remainder of the turns before, so that the core's
	// busy time is exactly the sum of its charges.
	turnPS  int64
	carryPS int64
	idled   time.Duration
	// current is the layer of the poller running now; plain Charge calls
	// are attributed to it.
	current int

	layerNames []string
	meters     []*LayerMeter

	statsSince time.Duration
	stats      CoreStats
	layerOps   [][hw.NumCostOps]OpStat

	// spread draws the per-charge multipliers of ops with a spread
	// (SetSpread); nil draws nothing.
	spread *spreadState
	// siblings share this core's physical core; while one is busy a
	// charge takes smtPenalty times as long (SetSiblings).
	siblings   []*Core
	smtPenalty float64
}

// attached is a poller with the layer its charges go to.
type attached struct {
	p     Poller
	layer int
}

// NewCore returns an idle core. A spinning core is a DPDK poll-mode lcore:
// every idle turn costs hw.CostPollIdle and its idle time is spent
// spinning. A non-spinning core sleeps until woken.
func NewCore(e *Engine, id, node int, prices *Prices, spins bool) *Core {
	c := &Core{ID: id, Node: node, eng: e, prices: prices, spins: spins}
	c.turn = NewTimer(e, c, 0)
	c.stats.Spinning = spins
	// Layer 0 takes what is charged before any poller runs.
	c.current = c.layer(layerDefault)
	if spins {
		c.layer(LayerIdlePoll)
	}
	return c
}

// Attach adds a poller to the core, its charges attributed to the layer
// "work", and wakes the core now.
func (c *Core) Attach(p Poller) { c.AttachAs(layerDefault, p) }

// AttachAs adds a poller whose charges (through the meter its Poll is
// given) are attributed to layer, and wakes the core now.
func (c *Core) AttachAs(layer string, p Poller) {
	c.pollers = append(c.pollers, attached{p: p, layer: c.layer(layer)})
	c.Wake(c.eng.Now())
}

// Meter returns a view of the core that charges it as the layer named:
// the meter a NIC queue, a shim or a driver bound to this core charges
// through, whichever poller's turn it runs in. The same name gives the
// same view.
func (c *Core) Meter(layer string) *LayerMeter {
	return c.meters[c.layer(layer)]
}

// layer returns the index of a layer, adding it on first use.
func (c *Core) layer(name string) int {
	for i, n := range c.layerNames {
		if n == name {
			return i
		}
	}
	c.layerNames = append(c.layerNames, name)
	c.meters = append(c.meters, &LayerMeter{c: c, layer: len(c.layerNames) - 1})
	c.layerOps = append(c.layerOps, [hw.NumCostOps]OpStat{})
	return len(c.layerNames) - 1
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
	return c.turnStart + time.Duration((c.carryPS+c.turnPS)/1000) + c.idled
}

// Charge implements hw.Meter, attributing the work to the layer of the
// poller running now.
func (c *Core) Charge(op hw.CostOp, count int64) { c.charge(c.current, op, count) }

func (c *Core) charge(layer int, op hw.CostOp, count int64) {
	if int(op) >= hw.NumCostOps || count <= 0 {
		return
	}
	ps := c.prices[op] * count
	if c.spread != nil && c.spread.sigma[op] > 0 && ps > 0 {
		ps = c.spread.scale(op, ps)
	}
	if c.smtPenalty > 0 && ps > 0 {
		start := c.Now()
		if until := c.siblingBusyUntil(); until > start {
			p := int64(float64(ps)*c.smtPenalty + 0.5)
			c.stats.SiblingPS += p
			c.stats.SiblingExtraPS += p - ps
			ps = p
		}
	}
	// The all-layers count (CoreStats.Ops) is summed from the layers'
	// when Stats is asked, not kept here: this runs for every charge.
	s := &c.layerOps[layer][op]
	s.Count += count
	s.PS += ps
	if op.Mode() == hw.CPUKernel {
		c.stats.KernelPS += ps
	} else {
		c.stats.UserPS += ps
	}
	if !c.inTurn {
		// Work done outside a turn (a process attaching to a device at
		// start-up, an event's action) occupies the core from now.
		d := c.carryPS + ps
		c.busyUntil = max(c.eng.Now(), c.busyUntil) + time.Duration(d/1000)
		c.carryPS = d % 1000
		return
	}
	c.turnPS += ps
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
	c.turnPS = 0
	c.idled = 0
	worked := false
	next := Never
	for _, a := range c.pollers {
		c.current = a.layer
		w, n := a.p.Poll(c)
		worked = worked || w
		next = min(next, n)
	}
	c.stats.Turns++
	if !worked {
		c.stats.IdleTurns++
		if c.spins {
			c.charge(c.layer(LayerIdlePoll), hw.CostPollIdle, 1)
		}
	}
	end := c.Now()
	c.carryPS = (c.carryPS + c.turnPS) % 1000
	c.inTurn = false
	c.busyUntil = end
	switch {
	case worked || c.again:
		c.turn.Reset(end)
	case next != Never:
		c.turn.Reset(max(next, end))
	}
}

// ResetStats starts a new measurement window at the current time, as the
// end of a warm-up does. It runs between turns, so every charge is in
// exactly one window.
func (c *Core) ResetStats() {
	c.statsSince = c.eng.Now()
	c.stats = CoreStats{Spinning: c.spins}
	clear(c.layerOps)
}

// Stats returns what the core did since the last ResetStats. Idle is the
// time of the window not spent on charged work.
func (c *Core) Stats() CoreStats {
	s := c.stats
	s.User = time.Duration(s.UserPS / 1000)
	s.Kernel = time.Duration(s.KernelPS / 1000)
	window := c.eng.Now() - c.statsSince
	s.Idle = max(0, window-time.Duration(s.BusyPS()/1000))
	s.Layers = make([]LayerStats, 0, len(c.layerNames))
	for i, name := range c.layerNames {
		s.Layers = append(s.Layers, LayerStats{Layer: name, Ops: c.layerOps[i]})
		for op, st := range c.layerOps[i] {
			s.Ops[op] += st.Count
		}
	}
	return s
}

// ChargedPS returns the work charged in the window so far, by CPU mode,
// in picoseconds: what Stats gives as UserPS and KernelPS, without
// building the rest.
func (c *Core) ChargedPS() (user, kernel int64) { return c.stats.UserPS, c.stats.KernelPS }

// Utilisation returns the share of the window spent on charged work, from
// 0 to 1 (a spinning core's polling is not counted as work).
func (s CoreStats) Utilisation(window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return float64(s.BusyPS()) / 1000 / float64(window)
}

// LayerMeter is a view of a core that attributes what it is charged to
// one layer. Its clock is the core's.
type LayerMeter struct {
	c     *Core
	layer int
}

// Now implements hw.Meter.
func (m *LayerMeter) Now() time.Duration { return m.c.Now() }

// Charge implements hw.Meter.
func (m *LayerMeter) Charge(op hw.CostOp, count int64) { m.c.charge(m.layer, op, count) }

// Idle implements hw.Meter.
func (m *LayerMeter) Idle(d time.Duration) { m.c.Idle(d) }

// Wake rings the core's doorbell, as Core.Wake.
func (m *LayerMeter) Wake(at time.Duration) { m.c.Wake(at) }
