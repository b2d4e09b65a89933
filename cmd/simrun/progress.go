package main

import (
	"fmt"
	"io"
	"os"
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
}

// isTerminal reports whether w is a terminal outside CI: only then is a
// progress bar drawn, so CI logs and pipes stay quiet.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("CI") != "" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// newRunClock returns a clock; it draws a bar on stderr when stderr is a
// terminal. total is the simulated time of every variant to run.
func newRunClock(stderr io.Writer, total time.Duration) *runClock {
	c := &runClock{}
	if isTerminal(stderr) {
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
		c.started = time.Now()
	}
	if c.bar != nil {
		c.bar.Describe(fmt.Sprintf("%s (%d/%d) sim %s of %s", p.Variant, p.Index+1, p.Variants,
			p.Sim.Round(time.Millisecond), p.End.Round(time.Millisecond)))
		_ = c.bar.Set64((c.simDone + p.Sim).Microseconds())
	}
	if !p.Done {
		return
	}
	c.simDone += p.End
	wall := time.Since(c.started).Seconds()
	t := report.VariantTiming{Variant: p.Variant, WallSeconds: report.Round(wall, 3),
		SimSeconds: report.Round(p.End.Seconds(), 9), Packets: p.Packets, Events: p.Events}
	if wall > 0 {
		t.SimToWall = report.Round(p.End.Seconds()/wall, 6)
		t.PacketsPerWallSecond = report.Round(float64(p.Packets)/wall, 0)
	}
	c.timing.Variants = append(c.timing.Variants, t)
}

// finish clears the bar.
func (c *runClock) finish() {
	if c.bar != nil {
		_ = c.bar.Finish()
	}
}
