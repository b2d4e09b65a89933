package oltp_test

import (
	"github.com/savanna-sim/savanna/apps/appcost"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/oltp"
	"github.com/savanna-sim/savanna/hw"
)

// task runs for work per slice until it has run total, then blocks.
type task struct {
	name        string
	total, done time.Duration
	log         *[]string
}

func (t *task) Run(m hw.Meter, slice time.Duration) bool {
	d := t.total - t.done
	if slice > 0 {
		d = min(d, slice)
	}
	m.Charge(appcost.Nanos, int64(d))
	t.done += d
	*t.log = append(*t.log, t.name)
	return t.done < t.total
}

var _ = Describe("the scheduler", func() {
	var (
		s     *oltp.Scheduler
		m     *hw.CountingMeter
		woken []time.Duration
		log   []string
	)
	BeforeEach(func() {
		s, m, woken, log = oltp.NewScheduler(), &hw.CountingMeter{}, nil, nil
	})

	It("runs runnable threads first in, first out, and wakes an idle core", func() {
		cpu := s.AddCPU(func(at time.Duration) { woken = append(woken, at) }, 0)
		a := &task{name: "a", total: time.Microsecond, log: &log}
		b := &task{name: "b", total: time.Microsecond, log: &log}
		s.Ready(a, 0)
		s.Ready(b, 0)
		Expect(woken).To(Equal([]time.Duration{0}), "one wake-up: the core is busy after it")
		for range 3 {
			cpu.Poll(m)
		}
		Expect(log).To(Equal([]string{"a", "b"}))
		Expect(s.Stats().Runs).To(BeEquivalentTo(2))
	})

	It("keeps a sleeper out of the run queue until its time, so that it holds up nobody behind it", func() {
		cpu := s.AddCPU(func(at time.Duration) { woken = append(woken, at) }, 0)
		a := &task{name: "a", total: time.Microsecond, log: &log}
		b := &task{name: "b", total: time.Microsecond, log: &log}
		s.Sleep(a, 50*time.Microsecond)
		Expect(woken).To(Equal([]time.Duration{50 * time.Microsecond}), "the idle core is asked for a turn at the sleeper's time")
		s.Ready(b, 0)
		worked, next := cpu.Poll(m)
		Expect(worked).To(BeTrue())
		Expect(log).To(Equal([]string{"b"}), "b runs at once, though a slept first")
		worked, next = cpu.Poll(m)
		Expect(worked).To(BeFalse())
		Expect(next).To(Equal(50*time.Microsecond), "an idle core sleeps until the sleeper's time")
		m.Idle(50 * time.Microsecond)
		cpu.Poll(m)
		Expect(log).To(Equal([]string{"b", "a"}))
	})

	It("charges a context switch only when the core changes thread", func() {
		cpu := s.AddCPU(func(time.Duration) {}, 0)
		a := &task{name: "a", total: time.Microsecond, log: &log}
		b := &task{name: "b", total: time.Microsecond, log: &log}
		for _, t := range []*task{a, a, b, a} {
			t.done = 0
			s.Ready(t, 0)
			cpu.Poll(m)
		}
		Expect(m.Counts[hw.CostContextSwitch]).To(BeEquivalentTo(3)) // a, (a again: none), b, a
		Expect(s.Stats().Switches).To(BeEquivalentTo(3))
	})

	It("does not run a thread before the time it became runnable", func() {
		cpu := s.AddCPU(func(time.Duration) {}, 0)
		a := &task{name: "a", total: time.Microsecond, log: &log}
		s.Ready(a, 50*time.Microsecond)
		worked, next := cpu.Poll(m)
		Expect(worked).To(BeFalse())
		Expect(next).To(Equal(50 * time.Microsecond))
		m.Clock = 50 * time.Microsecond
		worked, _ = cpu.Poll(m)
		Expect(worked).To(BeTrue())
		Expect(s.Stats().RunQueueWaitUS).To(BeZero())
	})

	It("runs a thread in slices and keeps it on the core between them", func() {
		cpu := s.AddCPU(func(time.Duration) {}, time.Microsecond)
		a := &task{name: "a", total: 3 * time.Microsecond, log: &log}
		b := &task{name: "b", total: time.Microsecond, log: &log}
		s.Ready(a, 0)
		s.Ready(b, 0)
		for range 4 {
			cpu.Poll(m)
		}
		Expect(log).To(Equal([]string{"a", "a", "a", "b"}))
		Expect(m.Counts[appcost.Nanos]).To(BeEquivalentTo(4000))
		Expect(m.Counts[hw.CostContextSwitch]).To(BeEquivalentTo(2))
	})

	It("wakes the first idle core of several", func() {
		var calls []int
		c0 := s.AddCPU(func(time.Duration) { calls = append(calls, 0) }, 0)
		s.AddCPU(func(time.Duration) { calls = append(calls, 1) }, 0)
		a := &task{name: "a", total: time.Microsecond, log: &log}
		b := &task{name: "b", total: time.Microsecond, log: &log}
		s.Ready(a, 0)
		s.Ready(b, 0)
		Expect(calls).To(Equal([]int{0, 1}))
		c0.Poll(m)
		c0.Poll(m)
		c0.Poll(m) // finds nothing: idle again
		s.Ready(&task{name: "c", total: time.Microsecond, log: &log}, 0)
		Expect(calls).To(Equal([]int{0, 1, 0}))
	})
})
