package sim

import "time"

// SetSiblings makes c share its physical core with siblings, the other
// hardware threads of that core, at an SMT yield: the combined throughput
// of two busy threads relative to one (1.25 means two threads together do
// 1.25 times one thread's work). While a sibling is busy, each thread gets
// yield/2 of the core, so work charged on c takes 2/yield as long.
//
// The sharing is decided at charge time, in virtual time, from each
// sibling's busy-until: a charge that starts while a sibling is busy
// takes 2/yield as long, one that starts while every sibling is idle
// runs at full speed, and neither is revised afterwards (docs/numa.md).
// When both threads stay busy this is exact: each thread's work takes
// 2/yield as long, and together they do yield times one thread's work.
// It overcharges a charge that starts just before its sibling goes idle
// and undercharges one that starts just before its sibling gets busy;
// charges are short (nanoseconds to microseconds) against busy periods,
// so these errors are small and of both signs. A yield of 0, or no
// siblings, leaves c a core of its own.
func (c *Core) SetSiblings(yield float64, siblings ...*Core) {
	c.siblings = nil
	c.smtPenalty = 0
	if yield <= 0 || len(siblings) == 0 {
		return
	}
	for _, s := range siblings {
		if s != nil && s != c {
			c.siblings = append(c.siblings, s)
		}
	}
	if len(c.siblings) > 0 {
		c.smtPenalty = 2 / yield
	}
}

// AddSibling adds s to c's siblings at c's current yield (cores made one
// by one: the second thread of a physical core links to the first).
func (c *Core) AddSibling(yield float64, s *Core) {
	c.SetSiblings(yield, append(append([]*Core(nil), c.siblings...), s)...)
}

// siblingBusyUntil returns the latest busy-until of c's siblings, the
// instant to which the physical core is shared with another busy thread.
func (c *Core) siblingBusyUntil() time.Duration {
	var until time.Duration
	for _, s := range c.siblings {
		until = max(until, s.busyAt())
	}
	return until
}

// busyAt returns until when c is busy as its siblings see it: the end of
// its last turn, or of the work it has charged so far in the turn it is
// running.
func (c *Core) busyAt() time.Duration {
	if c.inTurn {
		return c.Now()
	}
	return c.busyUntil
}
