package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
)

var _ = Describe("hyperthread siblings", func() {
	prices := func() *sim.Prices {
		var p sim.Prices
		p[hw.CostCopyByte] = 1000 // 1 ns a byte
		return &p
	}
	// run gives two hardware threads of one core 100 turns of 1 us of
	// work each (the second only when both is set), linked at yield, and
	// returns the first thread's stats and when its work ended.
	run := func(yield float64, both bool) (sim.CoreStats, time.Duration) {
		e := sim.NewEngine(1)
		a := sim.NewCore(e, 0, 0, prices(), false)
		b := sim.NewCore(e, 16, 0, prices(), false)
		a.SetSiblings(yield, b)
		b.SetSiblings(yield, a)
		wa := &worker{turns: 100, op: hw.CostCopyByte, n: 1000}
		a.Attach(wa)
		if both {
			b.Attach(&worker{turns: 100, op: hw.CostCopyByte, n: 1000})
		}
		e.RunUntil(time.Second)
		return a.Stats(), wa.seen[len(wa.seen)-1]
	}

	It("run a thread at full speed while its sibling is idle", func() {
		s, last := run(1.25, false)
		Expect(s.User).To(Equal(100 * time.Microsecond))
		Expect(last).To(Equal(99 * time.Microsecond))
		Expect(s.SiblingPS).To(BeZero())
	})

	It("share the core's throughput when both are busy: each takes 2/yield as long", func() {
		s, last := run(1.25, true)
		alone, lastAlone := run(1.25, false)
		Expect(last).To(BeNumerically(">", lastAlone))
		// Two busy threads at yield 1.25 do 1.25 us of work per us between
		// them: 100 us of work each takes ~160 us (the first turn of the
		// first thread runs before its sibling is busy).
		Expect(s.User).To(BeNumerically("~", 160*time.Microsecond, 2*time.Microsecond))
		Expect(s.User).To(BeNumerically(">", alone.User))
		Expect(s.SiblingExtraPS).To(BeNumerically("~", 60e6, 2e6))
		Expect(s.SiblingPS).To(BeNumerically("~", 160e6, 2e6))
	})

	It("leave a core without a yield unaffected (Kunpeng has no SMT)", func() {
		s, _ := run(0, true)
		Expect(s.User).To(Equal(100 * time.Microsecond))
		Expect(s.SiblingPS).To(BeZero())
	})

	It("decide at charge time from the sibling's busy-until", func() {
		e := sim.NewEngine(1)
		a := sim.NewCore(e, 0, 0, prices(), false)
		b := sim.NewCore(e, 16, 0, prices(), false)
		a.SetSiblings(1.25, b)
		b.SetSiblings(1.25, a)
		// b is busy for 100 ns from 0; a charging 1 us at 0 shares the
		// core: 1.6 us. Charged after b is idle again, 1 us.
		b.Charge(hw.CostCopyByte, 100)
		a.Charge(hw.CostCopyByte, 1000)
		Expect(a.Stats().UserPS).To(Equal(int64(1_600_000)))
		e.RunUntil(10 * time.Microsecond)
		a.Charge(hw.CostCopyByte, 1000)
		Expect(a.Stats().UserPS).To(Equal(int64(2_600_000)))
	})
})
