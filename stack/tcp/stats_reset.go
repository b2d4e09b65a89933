package tcp

// ResetStats starts a new measurement window, as the end of a warm-up
// does. The rule: counters (opens, resets, segments, retransmissions,
// probes, SYN cookies, drops by reason, data bytes, connections that
// entered TIME-WAIT...) go to zero; gauges (what is held now: CurrEstab,
// the connections established or in CLOSE-WAIT) keep their value, since
// those connections are still open and their closes will decrement it.
// The connections, listeners and timers are state, not statistics, and
// are left alone. MemInUse is a gauge too; its peak MemPeak starts the
// new window at the bytes held now.
func (s *Stack) ResetStats() {
	s.stats = Stats{CurrEstab: s.stats.CurrEstab, MemInUse: s.stats.MemInUse, MemPeak: s.stats.MemInUse}
}
