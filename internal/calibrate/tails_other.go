//go:build !linux

package calibrate

// tailBenches are the per-iteration timings; they need Linux.
func tailBenches() []Bench {
	return []Bench{linuxOnly("tcp_rr_tail"), linuxOnly("futex_handoff_tail_same_cpu"), linuxOnly("futex_handoff_tail_cross_cpu")}
}
