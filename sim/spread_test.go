package sim_test

import (
	"math"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
)

var _ = Describe("service-time spread", func() {
	prices := func() *sim.Prices {
		var p sim.Prices
		p[hw.CostCopyByte] = 1000   // 1 ns a byte
		p[hw.CostSyscall] = 100_000 // 100 ns
		return &p
	}
	// serviceTimes runs 2,000 turns of one syscall each on a core of an
	// engine seeded seed, with the spread given, and returns each turn's
	// service time.
	serviceTimes := func(seed uint64, spread *sim.Spread) []time.Duration {
		e := sim.NewEngine(seed)
		c := sim.NewCore(e, 0, 0, prices(), false)
		c.SetSpread(spread, e.RNG("spread:h:cpu0"))
		w := &worker{turns: 2000, op: hw.CostSyscall, n: 1}
		c.Attach(w)
		e.RunUntil(time.Second)
		var out []time.Duration
		for i := 1; i < len(w.seen); i++ {
			out = append(out, w.seen[i]-w.seen[i-1])
		}
		return out
	}
	cv := func(s float64) *sim.Spread {
		var sp sim.Spread
		sp[hw.CostSyscall] = s
		return &sp
	}
	stats := func(d []time.Duration) (mean, sd float64) {
		for _, x := range d {
			mean += float64(x)
		}
		mean /= float64(len(d))
		for _, x := range d {
			sd += (float64(x) - mean) * (float64(x) - mean)
		}
		return mean, math.Sqrt(sd / float64(len(d)))
	}

	It("draws a mean-1 multiplier with the coefficient of variation asked for", func() {
		d := serviceTimes(7, cv(0.3))
		mean, sd := stats(d)
		// 2,000 draws: the mean within 3%, the CV within 15% of 0.3.
		Expect(mean).To(BeNumerically("~", 100, 3))
		Expect(sd / mean).To(BeNumerically("~", 0.3, 0.045))
		// Not flat: the tail is well above the price.
		Expect(slices.Max(d)).To(BeNumerically(">", 160*time.Nanosecond))
	})

	It("gives the same service times for the same seed and other tails for another", func() {
		a, b := serviceTimes(7, cv(0.3)), serviceTimes(7, cv(0.3))
		Expect(a).To(Equal(b))
		c := serviceTimes(8, cv(0.3))
		Expect(c).NotTo(Equal(a))
		p99 := func(d []time.Duration) time.Duration {
			s := slices.Clone(d)
			slices.Sort(s)
			return s[len(s)*99/100]
		}
		Expect(p99(c)).NotTo(Equal(p99(a)))
	})

	It("costs nothing at zero spread: exactly the price, every turn", func() {
		for _, sp := range []*sim.Spread{nil, cv(0), {}} {
			for _, x := range serviceTimes(7, sp) {
				Expect(x).To(Equal(100 * time.Nanosecond))
			}
		}
	})

	It("applies only to the ops that have a spread", func() {
		e := sim.NewEngine(3)
		c := sim.NewCore(e, 0, 0, prices(), false)
		c.SetSpread(cv(0.5), e.RNG("spread:h:cpu0"))
		w := &worker{turns: 100, op: hw.CostCopyByte, n: 100}
		c.Attach(w)
		e.RunUntil(time.Second)
		Expect(c.Stats().User).To(Equal(100 * 100 * time.Nanosecond))
	})
})
