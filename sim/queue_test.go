package sim_test

import (
	"container/heap"
	"math/rand/v2"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/sim"
)

// refEngine is the engine as it was specified before the timing wheel: a
// binary heap ordered by (time, scheduling sequence). The specs below run
// it in lockstep with sim.Engine and require the same events at the same
// times in the same order.
type refEngine struct {
	now    time.Duration
	seq    uint64
	q      refHeap
	halted bool
	fire   func(id uint64)
}

type refEvent struct {
	at      time.Duration
	seq, id uint64
}

type refHeap []refEvent

func (h refHeap) Len() int { return len(h) }
func (h refHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h refHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)   { *h = append(*h, x.(refEvent)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (r *refEngine) Now() time.Duration { return r.now }
func (r *refEngine) Pending() int       { return len(r.q) }
func (r *refEngine) Halt()              { r.halted = true }
func (r *refEngine) At(at time.Duration, id uint64) {
	r.seq++
	heap.Push(&r.q, refEvent{at: at, seq: r.seq, id: id})
}
func (r *refEngine) NextAt() (time.Duration, bool) {
	if len(r.q) == 0 {
		return 0, false
	}
	return r.q[0].at, true
}
func (r *refEngine) Step() bool {
	if len(r.q) == 0 {
		return false
	}
	ev := heap.Pop(&r.q).(refEvent)
	r.now = ev.at
	r.fire(ev.id)
	return true
}
func (r *refEngine) RunUntil(t time.Duration) {
	r.halted = false
	for !r.halted && len(r.q) > 0 && r.q[0].at <= t {
		r.Step()
	}
	if !r.halted && r.now < t {
		r.now = t
	}
}

// clock is what a spawner needs of either engine.
type clock interface {
	Now() time.Duration
	At(at time.Duration, id uint64)
	Halt()
}

// realClock adapts sim.Engine to clock, firing into a spawner.
type realClock struct {
	e *sim.Engine
	s *spawner
}

func (c *realClock) Now() time.Duration             { return c.e.Now() }
func (c *realClock) At(at time.Duration, id uint64) { c.e.At(at, c, id) }
func (c *realClock) Halt()                          { c.e.Halt() }
func (c *realClock) Fire(_ *sim.Engine, id uint64)  { c.s.fire(id) }

// spawner is a model whose every event logs (time, id) and schedules up
// to two more at delays that cross the queue's digit boundaries, land on
// the current instant, or go far ahead. Its choices come from its own
// stream, so two engines that fire the same events in the same order
// make the same choices and logs.
type spawner struct {
	c    clock
	rng  *rand.Rand
	next uint64
	log  []uint64
}

func newSpawner(seed uint64) *spawner {
	return &spawner{rng: rand.New(rand.NewPCG(seed, 99))}
}

func (s *spawner) delay() time.Duration {
	r := s.rng
	switch r.IntN(9) {
	case 0:
		return 0
	case 1:
		return time.Duration(r.IntN(64))
	case 2: // just under, on or over a digit boundary of the clock
		edge := time.Duration(1) << (6 * (1 + r.IntN(5)))
		now := s.c.Now()
		return now | (edge - 1) - now + time.Duration(r.IntN(3))
	case 3:
		return time.Duration(r.IntN(5000))
	case 4:
		return time.Duration(r.IntN(1_000_000))
	case 5:
		return time.Duration(r.Int64N(1 << 40))
	default:
		return time.Duration(r.IntN(300))
	}
}

func (s *spawner) schedule() {
	s.next++
	s.c.At(s.c.Now()+s.delay(), s.next)
}

func (s *spawner) fire(id uint64) {
	s.log = append(s.log, uint64(s.c.Now()), id)
	if s.rng.IntN(2000) == 0 {
		s.c.Halt()
	}
	for n := s.rng.IntN(3); n > 0; n-- {
		s.schedule()
	}
}

var _ = Describe("the event queue", func() {
	// lockstep drives both engines through the same random mix of steps,
	// runs to a time (with halts), peeks and outside scheduling.
	// refill is how many events the driver schedules when few are left:
	// hundreds keep buckets small, thousands make them pass arrays
	// through the spares.
	lockstep := func(seed uint64, rounds, refill int) {
		e := sim.NewEngine(seed)
		real := newSpawner(seed)
		real.c = &realClock{e: e, s: real}
		ref := &refEngine{}
		model := newSpawner(seed)
		model.c = ref
		ref.fire = model.fire
		driver := rand.New(rand.NewPCG(seed, 7))
		for i := 0; i < rounds; i++ {
			if e.Pending() < 20 {
				for j := 0; j < refill; j++ {
					real.schedule()
					model.schedule()
				}
			}
			switch k := driver.IntN(10); {
			case k < 5:
				for n := driver.IntN(50); n > 0; n-- {
					Expect(e.Step()).To(Equal(ref.Step()))
				}
			case k < 8:
				to := e.Now() + time.Duration(driver.Int64N(1<<uint(driver.IntN(40))))
				e.RunUntil(to)
				ref.RunUntil(to)
			default:
				real.schedule()
				model.schedule()
			}
			Expect(e.Now()).To(Equal(ref.Now()), "round %d", i)
			Expect(e.Pending()).To(Equal(ref.Pending()), "round %d", i)
			at, ok := e.NextAt()
			rat, rok := ref.NextAt()
			Expect(ok).To(Equal(rok))
			Expect(at).To(Equal(rat), "round %d", i)
			Expect(real.log).To(HaveLen(len(model.log)), "round %d", i)
		}
		Expect(real.log).To(Equal(model.log))
		Expect(len(real.log)).To(BeNumerically(">", 20_000))
	}

	It("runs events in exactly the order of a (time, sequence) heap", func() {
		for seed := uint64(1); seed <= 8; seed++ {
			lockstep(seed, 3000, 200)
		}
		lockstep(9, 3000, 20_000)
	})

	It("keeps the scheduling order of events at one instant that arrive from different distances", func() {
		e := sim.NewEngine(1)
		r := &recorder{}
		// The same instant, 5000 ns, reached from far (scheduled at 0),
		// then from near (scheduled at 4990, after a cascade) and from
		// the instant itself.
		e.At(5000, r, 0)
		e.At(4990, sim.HandlerFunc(func(e *sim.Engine, _ uint64) {
			e.At(5000, r, 1)
			e.At(5000, sim.HandlerFunc(func(e *sim.Engine, _ uint64) {
				e.At(5000, r, 3)
			}), 0)
		}), 0)
		e.At(5000, r, 2)
		e.Run()
		Expect(r.log).To(Equal([]string{"5µs/a", "5µs/c", "5µs/b", "5µs/d"}))
	})

	It("takes events after RunUntil has moved the clock past the last event", func() {
		e := sim.NewEngine(1)
		r := &recorder{}
		e.At(10, r, 0)
		e.RunUntil(1 << 20)
		e.At(1<<20, r, 1)
		e.At(1<<20+64, r, 2)
		e.At(1<<20, r, 3)
		at, ok := e.NextAt()
		Expect(ok).To(BeTrue())
		Expect(at).To(Equal(time.Duration(1 << 20)))
		e.Run()
		Expect(r.log).To(Equal([]string{"10ns/a", "1.048576ms/b", "1.048576ms/d", "1.04864ms/c"}))
		Expect(e.Pending()).To(BeZero())
		_, ok = e.NextAt()
		Expect(ok).To(BeFalse())
	})
})
