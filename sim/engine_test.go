package sim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
)

// recorder logs the (time, arg) of every event it gets.
type recorder struct{ log []string }

func (r *recorder) Fire(e *sim.Engine, arg uint64) {
	r.log = append(r.log, e.Now().String()+"/"+string(rune('a'+arg)))
}

var _ = Describe("the engine", func() {
	It("runs events by time, then in the order they were scheduled", func() {
		e := sim.NewEngine(1)
		r := &recorder{}
		e.At(30, r, 0)
		e.At(10, r, 1)
		e.At(10, r, 2)
		e.At(20, r, 3)
		e.At(10, r, 4)
		e.Run()
		Expect(r.log).To(Equal([]string{"10ns/b", "10ns/c", "10ns/e", "20ns/d", "30ns/a"}))
		Expect(e.Fired()).To(Equal(uint64(5)))
	})

	It("runs until a time and leaves later events queued", func() {
		e := sim.NewEngine(1)
		r := &recorder{}
		e.At(5, r, 0)
		e.At(50, r, 1)
		e.RunUntil(20)
		Expect(r.log).To(Equal([]string{"5ns/a"}))
		Expect(e.Now()).To(Equal(20 * time.Nanosecond))
		Expect(e.Pending()).To(Equal(1))
	})

	It("refuses an event in the past", func() {
		e := sim.NewEngine(1)
		e.RunUntil(100)
		Expect(func() { e.At(50, &recorder{}, 0) }).To(Panic())
	})

	It("keeps a total order over a large random schedule", func() {
		e := sim.NewEngine(7)
		rng := e.RNG("schedule")
		var last time.Duration
		var lastSeq uint64
		type check struct{}
		checker := sim.HandlerFunc(func(e *sim.Engine, arg uint64) {
			Expect(e.Now()).To(BeNumerically(">=", last))
			if e.Now() == last {
				Expect(arg).To(BeNumerically(">", lastSeq))
			}
			last, lastSeq = e.Now(), arg
		})
		for i := uint64(1); i <= 10000; i++ {
			e.At(time.Duration(rng.IntN(1000)), checker, i)
		}
		e.Run()
		Expect(e.Fired()).To(Equal(uint64(10000)))
	})
})

var _ = Describe("timers", func() {
	It("fire once at the last time they were set, and not after Stop", func() {
		e := sim.NewEngine(1)
		r := &recorder{}
		t := sim.NewTimer(e, r, 0)
		t.Reset(10)
		t.Reset(30)
		u := sim.NewTimer(e, r, 1)
		u.Reset(20)
		u.Stop()
		e.Run()
		Expect(r.log).To(Equal([]string{"30ns/a"}))
	})

	It("move earlier but not later with ResetEarlier", func() {
		e := sim.NewEngine(1)
		r := &recorder{}
		t := sim.NewTimer(e, r, 0)
		t.ResetEarlier(50)
		t.ResetEarlier(70)
		t.ResetEarlier(40)
		e.Run()
		Expect(r.log).To(Equal([]string{"40ns/a"}))
	})
})

var _ = Describe("random streams", func() {
	It("depend on the seed and the model's name only", func() {
		a := sim.NewEngine(42).RNG("link:a").Uint64()
		// Another engine with the same seed, where other streams were
		// taken first, gives the same value for link:a.
		e := sim.NewEngine(42)
		_ = e.RNG("qat:0").Uint64()
		Expect(e.RNG("link:a").Uint64()).To(Equal(a))
		Expect(sim.NewEngine(43).RNG("link:a").Uint64()).NotTo(Equal(a))
		Expect(sim.NewEngine(42).RNG("link:b").Uint64()).NotTo(Equal(a))
	})
})

// worker charges a fixed amount of work for a number of turns.
type worker struct {
	turns int
	op    hw.CostOp
	n     int64
	seen  []time.Duration
}

func (w *worker) Poll(m hw.Meter) (bool, time.Duration) {
	if w.turns == 0 {
		return false, sim.Never
	}
	w.seen = append(w.seen, m.Now())
	w.turns--
	m.Charge(w.op, w.n)
	return true, sim.Never
}

// sleeper wakes at fixed deadlines and does nothing else.
type sleeper struct {
	wakes []time.Duration
	at    []time.Duration
}

func (s *sleeper) Poll(m hw.Meter) (bool, time.Duration) {
	now := m.Now()
	for len(s.at) > 0 && s.at[0] <= now {
		s.wakes = append(s.wakes, now)
		s.at = s.at[1:]
	}
	if len(s.at) == 0 {
		return false, sim.Never
	}
	return false, s.at[0]
}

var _ = Describe("cores", func() {
	prices := func() *sim.Prices {
		var p sim.Prices
		p[hw.CostCopyByte] = 1000   // 1 ns
		p[hw.CostSyscall] = 100_000 // 100 ns, kernel
		p[hw.CostPollIdle] = 20_000 // 20 ns
		return &p
	}

	It("are busy for the price of what they run, split by CPU mode", func() {
		e := sim.NewEngine(1)
		c := sim.NewCore(e, 0, 0, prices(), false)
		w := &worker{turns: 3, op: hw.CostCopyByte, n: 500}
		k := &worker{turns: 2, op: hw.CostSyscall, n: 1}
		c.Attach(w)
		c.Attach(k)
		e.RunUntil(10 * time.Microsecond)
		// Turn 1 at 0: 500 ns + 100 ns; turn 2 at 600; turn 3 at 1200
		// (only w works).
		Expect(w.seen).To(Equal([]time.Duration{0, 600, 1200}))
		s := c.Stats()
		Expect(s.User).To(Equal(1500 * time.Nanosecond))
		Expect(s.Kernel).To(Equal(200 * time.Nanosecond))
		Expect(s.Idle).To(Equal(10*time.Microsecond - 1700*time.Nanosecond))
		Expect(s.Ops[hw.CostSyscall]).To(Equal(int64(2)))
	})

	It("sleep until their next deadline, and spinning cores pay for idle polls", func() {
		e := sim.NewEngine(1)
		c := sim.NewCore(e, 1, 0, prices(), true)
		s := &sleeper{at: []time.Duration{1000, 5000}}
		c.Attach(s)
		e.RunUntil(10 * time.Microsecond)
		Expect(s.wakes).To(Equal([]time.Duration{1000, 5000}))
		st := c.Stats()
		Expect(st.Turns).To(Equal(uint64(3)))
		Expect(st.IdleTurns).To(Equal(uint64(3)))
		Expect(st.User).To(Equal(60 * time.Nanosecond))
	})

	It("take doorbells: a wake-up runs a turn no earlier than the core is free", func() {
		e := sim.NewEngine(1)
		c := sim.NewCore(e, 2, 0, prices(), false)
		w := &worker{turns: 1, op: hw.CostCopyByte, n: 1000}
		c.Attach(w)
		e.RunUntil(100)
		// Still busy until 1000 ns: a doorbell at 100 is served at 1000.
		w.turns = 1
		c.Wake(100)
		e.RunUntil(5000)
		Expect(w.seen).To(Equal([]time.Duration{0, 1000}))
	})

	It("let time pass without work when the running code idles", func() {
		e := sim.NewEngine(1)
		c := sim.NewCore(e, 3, 0, prices(), false)
		var after time.Duration
		c.Attach(pollFunc(func(m hw.Meter) (bool, time.Duration) {
			if after != 0 {
				return false, sim.Never
			}
			m.Charge(hw.CostCopyByte, 100)
			m.Idle(900 * time.Nanosecond)
			after = m.Now()
			return true, sim.Never
		}))
		e.RunUntil(10_000)
		Expect(after).To(Equal(1000 * time.Nanosecond))
		Expect(c.Stats().User).To(Equal(100 * time.Nanosecond))
	})
})

type pollFunc func(m hw.Meter) (bool, time.Duration)

func (f pollFunc) Poll(m hw.Meter) (bool, time.Duration) { return f(m) }
