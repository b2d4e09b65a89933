package simhost_test

import (
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/simhost"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/stack/sockring"
)

// callWorld is n call counts on one engine, each with a doorbell log and
// a count of deliveries; through a Consumer (its hand-offs) or each with
// a hand-off of its own.
type callWorld struct {
	eng      *sim.Engine
	c        *simhost.Consumer
	calls    []*sockring.Calls
	rings    []time.Duration
	arrivals []int
}

func newCallWorld(n int, consumer bool) *callWorld {
	w := &callWorld{eng: sim.NewEngine(1), arrivals: make([]int, n)}
	if consumer {
		w.c = simhost.NewConsumer(w.eng)
	}
	bell := func(at time.Duration) { w.rings = append(w.rings, at) }
	for i := range n {
		var h sockring.Handoff
		if consumer {
			h = w.c.NewHandoff(bell, func() { w.arrivals[i]++ })
		} else {
			h = simhost.NewHandoff(w.eng, bell)
		}
		w.calls = append(w.calls, sockring.NewCalls(h))
	}
	return w
}

// catchUp is the consumer at its clock now: the Consumer's one call, or
// a Sync of every call count (what a poll did before the Consumer).
func (w *callWorld) catchUp(now time.Duration) {
	if w.c != nil {
		w.c.CatchUp(now)
		return
	}
	for _, c := range w.calls {
		c.Sync(now)
	}
}

func (w *callWorld) arrived() []int {
	out := make([]int, len(w.calls))
	for i, c := range w.calls {
		out[i] = c.Arrived()
	}
	return out
}

var _ = Describe("Consumer (a stack thread's catch-up of its hand-offs)", func() {
	It("shows a hand-off once the consumer's clock passed the producer's, and its event then rings no doorbell", func() {
		w := newCallWorld(3, true)
		w.calls[0].Post(5 * time.Microsecond)
		w.calls[1].Post(9 * time.Microsecond)
		w.calls[2].Post(2 * time.Microsecond)
		Expect(w.c.Pending()).To(Equal(3))
		w.c.CatchUp(2*time.Microsecond - 1)
		Expect(w.arrived()).To(Equal([]int{0, 0, 0}), "a consumer before every producer's clock sees nothing")
		w.c.CatchUp(6 * time.Microsecond)
		Expect(w.arrived()).To(Equal([]int{1, 0, 1}), "at 6 us: the calls made at 2 and 5 us, not the one at 9 us")
		Expect(w.arrivals).To(Equal([]int{1, 0, 1}), "each delivery is told once")
		Expect(w.c.Pending()).To(Equal(1))
		w.eng.RunUntil(8 * time.Microsecond)
		Expect(w.rings).To(BeEmpty(), "the consumer saw them already: their events ring nothing")
		w.eng.RunUntil(9 * time.Microsecond)
		Expect(w.arrived()).To(Equal([]int{1, 1, 1}))
		Expect(w.rings).To(Equal([]time.Duration{9 * time.Microsecond}), "the event delivered this one, and rang")
		Expect(w.arrivals).To(Equal([]int{1, 1, 1}))
		Expect(w.c.Pending()).To(BeZero())
	})

	It("follows a hand-off's later calls as earlier ones are delivered", func() {
		w := newCallWorld(1, true)
		c := w.calls[0]
		c.Post(3 * time.Microsecond)
		c.Post(4 * time.Microsecond)
		c.Post(7 * time.Microsecond)
		w.eng.RunUntil(3 * time.Microsecond)
		Expect(c.Arrived()).To(Equal(1))
		Expect(w.c.Pending()).To(Equal(1), "two calls are still on their way")
		w.c.CatchUp(5 * time.Microsecond)
		Expect(c.Arrived()).To(Equal(2))
		w.c.CatchUp(6 * time.Microsecond)
		Expect(c.Arrived()).To(Equal(2))
		w.c.CatchUp(7 * time.Microsecond)
		Expect(c.Take()).To(Equal(3))
		Expect(w.c.Pending()).To(BeZero())
		Expect(w.arrivals[0]).To(Equal(3))
	})

	It("leaves a hand-off that left it to its event", func() {
		w := newCallWorld(2, true)
		h := w.c.NewHandoff(func(at time.Duration) { w.rings = append(w.rings, at) }, func() { w.arrivals[0] += 100 })
		c := sockring.NewCalls(h)
		c.Post(5 * time.Microsecond)
		w.calls[1].Post(5 * time.Microsecond)
		h.Leave()
		Expect(w.c.Pending()).To(Equal(1))
		w.c.CatchUp(6 * time.Microsecond)
		Expect(c.Arrived()).To(BeZero(), "no longer caught up")
		Expect(w.calls[1].Arrived()).To(Equal(1))
		w.eng.RunUntil(5 * time.Microsecond)
		Expect(c.Arrived()).To(Equal(1))
		Expect(w.rings).To(Equal([]time.Duration{5 * time.Microsecond}), "its own event delivered it")
		Expect(w.arrivals[0]).To(BeZero(), "and told no one")
	})

	// The catch-up must deliver exactly what a Sync of every ring would:
	// the same calls visible at every consumer clock and the same
	// doorbells, over random producers and consumers.
	It("delivers what a Sync of every ring delivers, in lockstep over random schedules", func() {
		const n = 64
		rng := rand.New(rand.NewPCG(23, 30))
		heap, scan := newCallWorld(n, true), newCallWorld(n, false)
		producer := make([]time.Duration, n)
		now := time.Duration(0)
		for step := range 20000 {
			switch op := rng.IntN(10); {
			case op < 5:
				// A producer ahead of the engine by up to 20 us posts.
				i := rng.IntN(n)
				producer[i] = max(producer[i], now) + time.Duration(rng.IntN(20000))
				heap.calls[i].Post(producer[i])
				scan.calls[i].Post(producer[i])
			case op < 8:
				// The consumer, up to 10 us ahead of the engine.
				at := now + time.Duration(rng.IntN(10000))
				heap.catchUp(at)
				scan.catchUp(at)
			case op < 9:
				i := rng.IntN(n)
				Expect(heap.calls[i].Take()).To(Equal(scan.calls[i].Take()), "step %d", step)
			default:
				now += time.Duration(rng.IntN(3000))
				heap.eng.RunUntil(now)
				scan.eng.RunUntil(now)
			}
			Expect(heap.arrived()).To(Equal(scan.arrived()), "step %d", step)
			Expect(heap.rings).To(Equal(scan.rings), "step %d", step)
		}
		Expect(len(heap.rings)).To(BeNumerically(">", 100), "events delivered some")
		Expect(heap.arrivals).NotTo(ContainElement(0))
	})
})
