package calibrate

import (
	"fmt"
	"math"
	"sort"
)

// maxWrittenSpread is sim/cost's bound on a coefficient of variation.
const maxWrittenSpread = 4

// tailTrim is the share of the slowest iterations left out of the
// standard deviation: an iteration in a thousand that waited
// milliseconds for another process's time slice measures the machine's
// load, not the path (the simulated twin has no other process), and one
// such wait outweighs the rest of the variance.
const tailTrim = 0.001

// tailSample summarizes per-iteration times ts, each covering per
// independent steps: the figure is one step's standard deviation (that
// of the iterations but the slowest tailTrim, over sqrt(per)), Extra
// its mean ("mean") and the iterations' p99 over their mean
// ("p99_mean", untrimmed).
func tailSample(ts []float64, per int) Sample {
	if len(ts) == 0 {
		return Sample{}
	}
	s := append([]float64(nil), ts...)
	sort.Float64s(s)
	all := 0.0
	for _, t := range s {
		all += t
	}
	p99 := quantile(s, 0.99)
	kept := s[:len(s)-int(float64(len(s))*tailTrim)]
	var sum float64
	for _, t := range kept {
		sum += t
	}
	mean := sum / float64(len(kept))
	var ss float64
	for _, t := range kept {
		ss += (t - mean) * (t - mean)
	}
	sd := math.Sqrt(ss / float64(len(kept)))
	full := all / float64(len(s))
	return Sample{Value: sd / math.Sqrt(float64(per)),
		Extra: map[string]float64{"mean": full / float64(per), "p99_mean": p99 / full}}
}

// tails writes the spreads the per-iteration timings measure onto the
// ops they price (each already measured by the mean benchmarks):
//   - context_switch: a hand-off on one CPU is a futex wake and wait and
//     the switch; its whole variance is given to the switch, the futex
//     calls' own being small beside it;
//   - wakeup: what a hand-off across CPUs adds to one on one CPU, its
//     variance the difference of the two;
//   - kernel_tcp_rx and kernel_tcp_tx: a loopback round trip is four
//     kernel segments (two out, two in) and two cross-CPU hand-offs; the
//     round trip's variance less the hand-offs' is split evenly between
//     the four segments, charged independently.
//
// A spread is a coefficient of variation per charge (sim.Spread): the
// standard deviation above over the op's price in this file.
func (p *pricer) tails() {
	same := p.r.Get("futex_handoff_tail_same_cpu")
	cross := p.r.Get("futex_handoff_tail_cross_cpu")
	rr := p.r.Get("tcp_rr_tail")
	if same != nil {
		sd := same.Summary.Median
		p.spread("context_switch", sd, fmt.Sprintf("the standard deviation of a hand-off between two threads on one CPU, %s ns (mean %s ns, p99/mean of the round trips %s), all of it the switch's",
			num(sd), num(same.Extra["mean"]), num(same.Extra["p99_mean"])), same)
	}
	if same != nil && cross != nil {
		v := sq(cross.Summary.Median) - sq(same.Summary.Median)
		p.spread("wakeup", math.Sqrt(max(0, v)), fmt.Sprintf("sqrt(cross-CPU hand-off variance - same-CPU) = sqrt(%s^2 - %s^2) ns (cross-CPU mean %s ns, p99/mean of its round trips %s)",
			num(cross.Summary.Median), num(same.Summary.Median), num(cross.Extra["mean"]), num(cross.Extra["p99_mean"])), same, cross)
	}
	if rr != nil && cross != nil {
		v := sq(rr.Summary.Median) - 2*sq(cross.Summary.Median)
		sd := math.Sqrt(max(0, v) / 4)
		method := fmt.Sprintf("sqrt((round-trip variance - 2 cross-CPU hand-offs' variance) / 4 segments) = sqrt((%s^2 - 2 x %s^2) / 4) ns per segment (round trip mean %s ns, p99/mean %s)",
			num(rr.Summary.Median), num(cross.Summary.Median), num(rr.Extra["mean"]), num(rr.Extra["p99_mean"]))
		p.spread("kernel_tcp_rx", sd, method, rr, cross)
		p.spread("kernel_tcp_tx", sd, method, rr, cross)
	}
}

func sq(x float64) float64 { return x * x }

// spread sets op's spread to sd over its price in the file, when the
// price was measured here and sd is positive.
func (p *pricer) spread(op string, sd float64, method string, from ...*Measurement) {
	pr := p.out[op]
	if pr == nil || !(sd > 0) || !(pr.Entry.Value > 0) {
		return
	}
	cv := roundSig(min(maxWrittenSpread, sd/p.ns(op)), 2)
	if !(cv > 0) {
		return
	}
	src := fmt.Sprintf("simrun calibrate: coefficient of variation %s = %s ns / the price %s ns; %s", num(cv), num(sd), num(p.ns(op)), method)
	noisy := false
	for _, m := range from {
		src += fmt.Sprintf("; %s [%s]: %s %s", m.Bench.Name, m.Bench.What, m.Summary, m.Bench.Unit)
		noisy = noisy || m.Noisy
	}
	if noisy {
		src = "NOISY (a benchmark's runs spread more than the rule allows): " + src
	}
	pr.Entry.Spread = cv
	pr.Entry.SpreadSource = src + "; machine: " + p.r.Machine.String()
}
