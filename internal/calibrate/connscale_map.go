package calibrate

import (
	"fmt"
	"math"
	"strings"

	"github.com/savanna-sim/savanna/sim/cost"
)

// ConnScalePoints are the numbers of loopback connections the round trips
// are spread over.
func ConnScalePoints() []int { return []int{1, 16, 128, 1024} }

// The pointer chase's buffer is chaseFactor times the private cache's
// size (chaseBytes where /sys lists none): so much larger that nearly
// every load misses it, and of the order of the state of a thousand or
// so connections, so that whether a miss then hits the shared cache or
// memory is as it is for evicted socket state on this machine.
const (
	chaseFactor = 8
	chaseBytes  = 16 << 20
)

// connIters scales a full run's iteration count n by scale (1, or 0.2
// for --quick), never below 1.
func connIters(n int, scale float64) int { return max(1, int(float64(n)*scale)) }

// connSegments is what one round trip of tcpRRConns charges per
// connection in the model: the request's output on the client's socket
// and input on the server's, the reply's output and input, four kernel
// segments whose work touches a socket's state, all on the one CPU.
const connSegments = 4

// connScale prices cache_miss, core_cache_bytes and kernel_conn_bytes
// from the working set's benchmarks. kernel_conn_bytes is fitted: the
// rise of the round trip at the most connections over one connection is
// solved for the bytes B with which the model's charge, connSegments x
// ceil(B/64) x cache_miss x max(0, 1 - core_cache_bytes / (2n x B)) (2n
// sockets on one core), equals it. The other points are reported beside
// the fit, as its check.
func (p *pricer) connScale() {
	if ms := p.get([]string{cost.KeyCacheMiss}, "cache_miss_chase"); ms != nil {
		p.set(cost.KeyCacheMiss, ms[0].Summary.Median, fmt.Sprintf("a dependent load over a buffer %d times the private cache, past it", chaseFactor), ms...)
	}
	if ms := p.get([]string{cost.KeyCoreCacheBytes}, "core_cache_size"); ms != nil {
		p.setBytes(cost.KeyCoreCacheBytes, ms[0].Summary.Median, 0.5,
			"the private L2's size; the uncertainty is of the share of it the connections' state can hold (the cache also holds the kernel's other data and the application's)", ms...)
	}
	names := []string{"cache_miss_chase", "core_cache_size"}
	pts := ConnScalePoints()
	for _, n := range pts {
		names = append(names, fmt.Sprintf("tcp_rr_conns_%d", n))
	}
	ms := p.get([]string{cost.KeyKernelConnBytes}, names...)
	if ms == nil {
		return
	}
	miss, cache := ms[0].Summary.Median, ms[1].Summary.Median
	base := ms[2].Summary.Median
	last := ms[len(ms)-1]
	n := pts[len(pts)-1]
	rise := last.Summary.Median - base
	b, ok := fitConnBytes(rise, miss, cache, 2*n)
	var checks []string
	for i, k := range pts[1:] {
		m := ms[3+i]
		checks = append(checks, fmt.Sprintf("%d connections: measured rise %s ns, model %s ns", k, num(m.Summary.Median-base),
			num(connSegments*connMissesAt(b, cache, 2*k)*miss)))
	}
	if !ok {
		p.why[cost.KeyKernelConnBytes] = fmt.Sprintf("the round trip over %d connections rose %s ns over one connection, which no per-connection size explains at cache_miss %s ns and a %s-byte private cache (the rise is below this machine's noise, or %d sockets' state fits the cache)",
			n, num(rise), num(miss), num(cache), 2*n)
		return
	}
	// The fit's uncertainty: the rise's, as the runs' spreads of the two
	// points give it, carried through the miss price.
	u := propagated(rise, ms[2], last) + ms[0].Summary.Spread()
	p.setBytes(cost.KeyKernelConnBytes, b, u, fmt.Sprintf("fitted: the round trip over %d loopback connections rose %s ns over one connection; %d segments a round trip each touching one socket's state, %d sockets on one CPU, solved for the bytes per socket B in %d x ceil(B/64) x cache_miss (%s ns) x max(0, 1 - core_cache_bytes (%s) / (%d x B)); check: %s",
		n, num(rise), connSegments, 2*n, connSegments, num(miss), num(cache), 2*n, strings.Join(checks, "; ")), ms...)
}

// connMissesAt is the model's misses per segment at sockets sockets of
// b bytes each against a cache of cache bytes (sim/cost.ConnCache).
func connMissesAt(b, cache float64, sockets int) float64 {
	return cost.ConnCache{ConnBytes: b, CacheBytes: cache}.MissesPerSegment(sockets)
}

// fitConnBytes solves connSegments x misses(B) x miss = rise for B by
// bisection: the charge grows with B (more lines, and a larger share of
// them evicted), from 0 while the sockets fit the cache. ok is false
// when rise is not positive or beyond what 64 KiB of state per socket
// would give.
func fitConnBytes(rise, miss, cache float64, sockets int) (float64, bool) {
	if !(rise > 0) || !(miss > 0) || !(cache > 0) {
		return 0, false
	}
	charge := func(b float64) float64 { return connSegments * connMissesAt(b, cache, sockets) * miss }
	lo, hi := 64.0, 64.0*1024
	if charge(hi) < rise {
		return 0, false
	}
	for range 60 {
		mid := (lo + hi) / 2
		if charge(mid) < rise {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Round(hi), true
}

// setBytes prices a size (unit bytes) from the measurements.
func (p *pricer) setBytes(op string, v, u float64, method string, from ...*Measurement) {
	if _, ok := p.def[op]; !ok {
		return
	}
	pr := &Price{Op: op, Measured: true}
	var parts []string
	for _, m := range from {
		pr.Noisy = pr.Noisy || m.Noisy
		pr.Spread = max(pr.Spread, m.Summary.Spread())
		pr.Benches = append(pr.Benches, m.Bench.Name)
		parts = append(parts, fmt.Sprintf("%s [%s]: %s %s", m.Bench.Name, m.Bench.What, m.Summary, m.Bench.Unit))
	}
	src := fmt.Sprintf("simrun calibrate: %s bytes; %s; from %s; machine: %s", num(v), method, strings.Join(parts, "; "), p.r.Machine)
	if pr.Noisy {
		src = fmt.Sprintf("NOISY (largest spread %.1f%%, limit %.0f%%): %s", 100*pr.Spread, 100*p.rule.MaxSpread, src)
	}
	if math.IsNaN(u) || math.IsInf(u, 0) {
		u = 1
	}
	pr.Entry = cost.Entry{Value: math.Round(v), Unit: "bytes", Source: src, Uncertainty: roundSig(min(1, max(minUncertainty, u)), 2)}
	p.out[op] = pr
}
