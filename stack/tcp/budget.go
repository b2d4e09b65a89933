package tcp

import "sync/atomic"

// ConnBudget is a connection limit shared by the stacks of one process:
// Gazelle's max_connections (20,000) holds for the whole process, whose
// stacks run one per lcore. Each stack also keeps its own Config.MaxConns.
// It is safe for concurrent use; between a stack's check and its count
// another lcore may take the last place, so under real-time load the
// limit can be passed by at most one connection per lcore.
type ConnBudget struct {
	max   int64
	inUse atomic.Int64
}

// NewConnBudget returns a budget of max connections.
func NewConnBudget(max int) *ConnBudget { return &ConnBudget{max: int64(max)} }

// InUse returns the connections counted against the budget.
func (b *ConnBudget) InUse() int { return int(b.inUse.Load()) }

// Max returns the limit.
func (b *ConnBudget) Max() int { return int(b.max) }

// SetConnBudget makes the stack count its connections against b as well
// as against its own MaxConns. Set it before the first connection.
func (s *Stack) SetConnBudget(b *ConnBudget) { s.budget = b }

// full reports whether a new connection would pass a limit.
func (s *Stack) full() bool {
	return s.conns.len() >= s.cfg.MaxConns || (s.budget != nil && s.budget.inUse.Load() >= s.budget.max)
}
