//go:build !linux

package calibrate

// connScaleBenches are the working set's benchmarks; they need Linux.
func connScaleBenches() []Bench {
	b := []Bench{linuxOnly("cache_miss_chase"), linuxOnly("core_cache_size")}
	for range ConnScalePoints() {
		b = append(b, linuxOnly("tcp_rr_conns"))
	}
	return b
}
