package rig

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/rig/report"
	"github.com/savanna-sim/savanna/sim"
)

// Linux's load average (kernel/sched/loadavg.c, include/linux/sched/loadavg.h):
// every LOAD_FREQ the scheduler counts the active tasks (runnable plus
// uninterruptible: calc_load_fold_active) and folds them into three
// exponentially decaying averages in 11-bit fixed point (calc_load).
const (
	// loadFreq is LOAD_FREQ, 5*HZ+1 ticks, at HZ=1000 (CONFIG_HZ_1000, the
	// RHEL/CentOS 7 kernels of the article's era).
	loadFreq = 5001 * time.Millisecond
	fshift   = 11          // FSHIFT
	fixed1   = 1 << fshift // FIXED_1
	exp1     = 1884        // EXP_1: 1/exp(5sec/1min) in fixed point
	exp5     = 2014        // EXP_5
	exp15    = 2037        // EXP_15
)

// calcLoad is the kernel's calc_load: load decays by exp towards active
// (both fixed point); rounding up while the load rises, as the kernel does.
func calcLoad(load, exp, active uint64) uint64 {
	n := load*exp + active*(fixed1-exp)
	if active >= load {
		n += fixed1 - 1
	}
	return n / fixed1
}

// appThread is an application thread of a host (a Tengine worker) as the
// scheduler sees it, for the load average. It wraps the thread's poller
// and reads the core's clock and charges around each turn:
//
//   - a turn that did work makes the thread runnable for the CPU it
//     charged (its own code, its syscalls, a QAT wait spent polling);
//     time the turn idled (Meter.Idle: a futex or usleep wait for QAT in
//     thread mode) is sleep, which the load average does not count;
//   - between two turns that both did work the thread stayed runnable,
//     waiting for the CPU (softirq on its core, another thread's turn);
//   - a turn that found nothing ends in epoll_wait, asleep, and the
//     thread is not runnable until its next turn with work.
//
// Softirq and interrupt work on the core belong to no thread, so they
// count in busy CPU but not in the load: why Linux's load is below the
// busy CPUs of a kernel-stack web server.
type appThread struct {
	p    sim.Poller
	core *sim.Core
	// since is the window's start; runPS the runnable time in it.
	since time.Duration
	runPS int64
	// working says the last turn did work; lastEnd is when it ended.
	working bool
	lastEnd time.Duration
	// hits[k] says the thread was runnable at the k-th LOAD_FREQ sample
	// of the window (since + (k+1)*loadFreq).
	hits []bool
}

func newAppThread(p sim.Poller, core *sim.Core) *appThread {
	return &appThread{p: p, core: core}
}

// Poll implements sim.Poller around the thread's own.
func (t *appThread) Poll(m hw.Meter) (bool, time.Duration) {
	start := m.Now()
	u0, k0 := t.core.ChargedPS()
	worked, next := t.p.Poll(m)
	end := m.Now()
	u1, k1 := t.core.ChargedPS()
	ran := (u1 - u0) + (k1 - k0)
	if t.working && worked && start > t.lastEnd {
		// Runnable all along, waiting for the core.
		t.runnable(t.lastEnd, start, int64(start-t.lastEnd)*1000)
	}
	if ran > 0 {
		// The turn's CPU, placed from its start: where in the turn a
		// sleep fell does not matter to a 5 s sample.
		t.runnable(start, min(end, start+time.Duration(ran/1000)), ran)
	}
	t.working, t.lastEnd = worked, end
	return worked, next
}

// runnable adds ps of runnable time over [from, to) and the samples that
// fall in it.
func (t *appThread) runnable(from, to time.Duration, ps int64) {
	if to <= t.since {
		return
	}
	if from < t.since {
		ps -= int64(t.since-from) * 1000
		from = t.since
	}
	t.runPS += max(ps, 0)
	// Samples at since + k*loadFreq, k >= 1, within [from, to).
	for k := int((from - t.since + loadFreq - 1) / loadFreq); t.since+time.Duration(k)*loadFreq < to; k++ {
		if k == 0 {
			continue
		}
		for len(t.hits) < k {
			t.hits = append(t.hits, false)
		}
		t.hits[k-1] = true
	}
}

// ResetStats starts a window at now: runnable time before it is dropped.
func (t *appThread) ResetStats(now time.Duration) {
	t.since, t.runPS, t.hits = now, 0, nil
}

// threadedApp is a runner whose threads the load average counts.
type threadedApp interface {
	Threads() []*appThread
}

// loadFigures gives each host whose applications' threads the rig knows
// its load:
//
//	HOST.load.nr_running_avg  runnable threads, averaged over the window
//	HOST.load.avg1, avg5, avg15  /proc/loadavg: calc_load every LOAD_FREQ
//	                          (5.001 s) from 0 at the window's start
//	HOST.load.samples         LOAD_FREQ samples in the window
//	HOST.load.threads         threads counted
//
// A run shorter than LOAD_FREQ has no sample, so avg1 is 0 there and
// nr_running_avg is the figure to read: the value a steady load's
// averages converge to.
func (w *world) loadFigures(t report.Tree, window time.Duration) {
	for _, hn := range w.hostOrder {
		var threads []*appThread
		for _, a := range w.apps {
			if ta, ok := a.run.(threadedApp); ok && a.host == w.hosts[hn] {
				threads = append(threads, ta.Threads()...)
			}
		}
		if len(threads) == 0 {
			continue
		}
		samples := int(window / loadFreq)
		var runPS int64
		active := make([]uint64, samples)
		for _, th := range threads {
			runPS += th.runPS
			for k := range min(samples, len(th.hits)) {
				if th.hits[k] {
					active[k]++
				}
			}
		}
		var a1, a5, a15 uint64
		for _, n := range active {
			a1 = calcLoad(a1, exp1, n*fixed1)
			a5 = calcLoad(a5, exp5, n*fixed1)
			a15 = calcLoad(a15, exp15, n*fixed1)
		}
		lt := t.Sub(hn + ".load")
		avg := 0.0
		if window > 0 {
			avg = float64(runPS) / 1000 / float64(window)
		}
		lt.Set("nr_running_avg", report.Round(avg, 3))
		lt.Set("avg1", loadFloat(a1))
		lt.Set("avg5", loadFloat(a5))
		lt.Set("avg15", loadFloat(a15))
		lt.Set("samples", float64(samples))
		lt.Set("threads", float64(len(threads)))
	}
}

// loadFloat is a fixed-point load as /proc/loadavg prints it (two
// decimals: LOAD_INT and LOAD_FRAC).
func loadFloat(l uint64) float64 {
	l += fixed1 / 200 // FIXED_1/200, the kernel's rounding for two decimals
	return float64(l>>fshift) + float64(((l&(fixed1-1))*100)>>fshift)/100
}
