package rig

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim"
)

// busyThread always has work: each turn it charges one app_nanos op of
// 100 us, as a worker with requests queued does.
type busyThread struct{ turns int }

func (b *busyThread) Poll(m hw.Meter) (bool, time.Duration) {
	b.turns++
	m.Charge(hw.CostOp(0), 1)
	return true, sim.Never
}

// sleepingThread never has work: it is asleep in epoll_wait, polled only
// because the core turns.
type sleepingThread struct{}

func (sleepingThread) Poll(hw.Meter) (bool, time.Duration) { return false, sim.Never }

// qatWaiter does 10 us of work, then waits 90 us for a completion, either
// polling the response ring (charged: runnable) or asleep on a futex
// (Meter.Idle: not runnable), and has work again at once.
type qatWaiter struct{ sleeps bool }

func (q qatWaiter) Poll(m hw.Meter) (bool, time.Duration) {
	m.Charge(hw.CostOp(0), 1) // 10 us at the price below
	if q.sleeps {
		m.Idle(90 * time.Microsecond)
	} else {
		for range 9 {
			m.Charge(hw.CostOp(0), 1)
		}
	}
	return true, sim.Never
}

var _ = Describe("the load average (Linux's runnable threads, not busy CPUs)", func() {
	// one core, run for 100 ms after a 10 ms warm-up.
	run := func(price time.Duration, pollers ...sim.Poller) ([]*appThread, *sim.Core, *sim.Engine) {
		e := sim.NewEngine(1)
		var prices sim.Prices
		prices[0] = int64(price) * 1000
		c := sim.NewCore(e, 0, 0, &prices, false)
		var ts []*appThread
		for _, p := range pollers {
			t := newAppThread(p, c)
			ts = append(ts, t)
			c.Attach(t)
		}
		e.RunUntil(10 * time.Millisecond)
		c.ResetStats()
		for _, t := range ts {
			t.ResetStats(e.Now())
		}
		e.RunUntil(110 * time.Millisecond)
		return ts, c, e
	}
	avg := func(ts []*appThread, window time.Duration) float64 {
		var ps int64
		for _, t := range ts {
			ps += t.runPS
		}
		return float64(ps) / 1000 / float64(window)
	}

	It("counts a runnable thread waiting for the CPU and not one asleep in epoll_wait", func() {
		a, b := &busyThread{}, &busyThread{}
		ts, c, _ := run(100*time.Microsecond, a, b, sleepingThread{})
		window := 100 * time.Millisecond
		Expect(c.Stats().Utilisation(window)).To(BeNumerically("~", 1, 0.01), "one CPU, busy all along")
		Expect(a.turns).To(BeNumerically(">", 400))
		// Two threads share the one CPU: each is runnable the whole time,
		// running or waiting for the other's turn; the third sleeps.
		Expect(avg(ts, window)).To(BeNumerically("~", 2, 0.01))
		Expect(avg(ts[2:], window)).To(BeZero())
	})

	It("counts a worker polling for QAT as runnable and one asleep on a futex as not", func() {
		window := 100 * time.Millisecond
		polling, _, _ := run(10*time.Microsecond, qatWaiter{})
		Expect(avg(polling, window)).To(BeNumerically("~", 1, 0.01))
		sleeping, _, _ := run(10*time.Microsecond, qatWaiter{sleeps: true})
		Expect(avg(sleeping, window)).To(BeNumerically("~", 0.1, 0.01))
	})

	It("folds samples every LOAD_FREQ as calc_load does", func() {
		// A thread runnable all along for a minute: avg1 climbs to
		// 1 - e^-1 of it (63%), as a fresh machine's /proc/loadavg does.
		e := sim.NewEngine(1)
		var prices sim.Prices
		prices[0] = int64(time.Millisecond) * 1000
		c := sim.NewCore(e, 0, 0, &prices, false)
		t := newAppThread(&busyThread{}, c)
		t.ResetStats(0)
		c.Attach(t)
		e.RunUntil(60 * time.Second)
		w := &world{hostOrder: []string{"h"}, hosts: map[string]*host{"h": {name: "h"}}}
		w.apps = []*app{{name: "x", host: w.hosts["h"], run: httpRunner{threads: []*appThread{t}}}}
		tree := treeOf(w, 60*time.Second)
		Expect(tree["h.load.samples"]).To(Equal(11.0)) // 60 s / 5.001 s
		Expect(tree["h.load.nr_running_avg"]).To(BeNumerically("~", 1, 0.001))
		// 1 - (1884/2048)^11 = 0.60 (the kernel's fixed point rounds up
		// while rising).
		Expect(tree["h.load.avg1"]).To(BeNumerically("~", 0.60, 0.02))
		Expect(tree["h.load.avg15"]).To(BeNumerically("<", tree["h.load.avg5"]))
	})
})

// treeOf is w's load figures over window, flattened to dotted paths.
func treeOf(w *world, window time.Duration) map[string]float64 {
	t := report.Tree{}
	w.loadFigures(t, window)
	out := map[string]float64{}
	var walk func(prefix string, n report.Tree)
	walk = func(prefix string, n report.Tree) {
		for k, v := range n {
			switch x := v.(type) {
			case report.Tree:
				walk(prefix+k+".", x)
			case float64:
				out[prefix+k] = x
			}
		}
	}
	walk("", t)
	return out
}
