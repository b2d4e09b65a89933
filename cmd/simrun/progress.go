package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/savanna-sim/savanna/rig"
	"github.com/savanna-sim/savanna/rig/report"
)

// runClock times a run from the rig's progress calls: it draws the
// progress bar on a terminal and collects each variant's wall-clock cost
// for timing.json. The rig itself reads no wall clock.
type runClock struct {
	bar     *progressbar.ProgressBar
	started time.Time
	timing  report.Timing
	// simDone is the simulated time of the variants already finished.
	simDone time.Duration
	// total is the simulated time of every variant to run.
	total time.Duration
	// now is the wall clock (time.Now; specs give their own).
	now func() time.Time
	// warn is where the long-run estimate goes, nil to keep quiet;
	// estimated is set once it has been made.
	warn      io.Writer
	estimated bool
}

// longRun is the wall time from which simrun run says, when it starts,
// how long it will take.
const longRun = time.Hour

// isTerminal reports whether w is a terminal outside CI: only then is a
// progress bar drawn, so CI logs and pipes stay quiet.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("CI") != "" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// newRunClock returns a clock; it draws a bar on stderr, with an
// estimate of the wall time left, when stderr is a terminal or force is
// set (simrun run --progress), and says once when the run starts if it
// will take more than an hour. total is the simulated time of every
// variant to run.
func newRunClock(stderr io.Writer, total time.Duration, force bool) *runClock {
	c := &runClock{total: total, now: time.Now}
	if force || isTerminal(stderr) {
		c.warn = stderr
		c.bar = progressbar.NewOptions64(total.Microseconds(),
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	return c
}

// progress is the rig's Progress callback.
func (c *runClock) progress(p rig.Progress) {
	if p.Sim == 0 && !p.Done {
		c.started = c.now()
	}
	if !c.estimated && !p.Done && p.Sim > 0 {
		c.estimated = true
		c.estimate(c.simDone+p.Sim, c.now().Sub(c.started))
	}
	if c.bar != nil {
		c.bar.Describe(fmt.Sprintf("%s (%d/%d) sim %s of %s", p.Variant, p.Index+1, p.Variants,
			p.Sim.Round(time.Millisecond), p.End.Round(time.Millisecond)))
		_ = c.bar.Set64((c.simDone + p.Sim).Microseconds())
	}
	if !p.Done {
		return
	}
	c.simDone += p.Sim
	wall := c.now().Sub(c.started).Seconds()
	t := report.VariantTiming{Variant: p.Variant, WallSeconds: report.Round(wall, 3),
		SimSeconds: report.Round(p.Sim.Seconds(), 9), Packets: p.Packets, Events: p.Events}
	if wall > 0 {
		t.SimToWall = report.Round(p.Sim.Seconds()/wall, 6)
		t.PacketsPerWallSecond = report.Round(float64(p.Packets)/wall, 0)
	}
	c.timing.Variants = append(c.timing.Variants, t)
}

// estimate says, once, how long the whole run will take at the rate of
// its first step (sim simulated in wall), when that is more than
// longRun. Later variants may run faster or slower; the bar's estimate
// follows them.
func (c *runClock) estimate(sim, wall time.Duration) {
	if c.warn == nil || sim <= 0 || wall <= 0 {
		return
	}
	left := time.Duration(float64(c.total-sim) * (float64(wall) / float64(sim)))
	if left+wall <= longRun {
		return
	}
	if c.bar != nil {
		_ = c.bar.Clear()
	}
	fmt.Fprintf(c.warn, "simrun: this run will take about %s of wall time at the current rate (press Ctrl-C to stop with a partial report)\n", roughly(left+wall))
}

// roughly prints a long wall time to the minute: 1h20m.
func roughly(d time.Duration) string {
	s := d.Round(time.Minute).String()
	return strings.TrimSuffix(s, "0s")
}

// finish clears the bar.
func (c *runClock) finish() {
	if c.bar != nil {
		_ = c.bar.Finish()
	}
}
