package sim

import (
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rearm reschedules itself up to a second ahead: a population of
// connection timers.
type rearm struct{ rng *rand.Rand }

func (r *rearm) Fire(e *Engine, _ uint64) {
	e.After(time.Microsecond+time.Duration(r.rng.Int64N(int64(time.Second))), r, 0)
}

// held is the capacity, in events, of every array the wheel holds.
func (w *wheel) held() int {
	n := w.spareCap
	for l := range w.buckets {
		for b := range w.buckets[l] {
			n += cap(w.buckets[l][b])
		}
	}
	return n
}

var _ = Describe("the event queue's memory", func() {
	It("stays within a bound of the events queued over a long run, as its buckets fill in turn", func() {
		e := NewEngine(1)
		r := &rearm{rng: rand.New(rand.NewPCG(1, 2))}
		const timers = 10_000
		for i := 0; i < timers; i++ {
			r.Fire(e, 0)
		}
		// 40 simulated seconds: each level-5 bucket (2^30 ns) and
		// many level-4 ones are filled once, with every timer of
		// their second.
		peak := 0
		for e.Now() < 40*time.Second {
			e.Step()
			peak = max(peak, e.q.held())
		}
		Expect(e.Pending()).To(Equal(timers))
		// Arrays in use (at most twice their contents, but a spare
		// larger than asked may serve), the spares' budget and what
		// emptied buckets keep.
		bound := 4*timers + spareFloor + levels*perLevel*keepUpper/8
		Expect(peak).To(BeNumerically("<=", bound))
	})
})
