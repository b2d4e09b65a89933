package calibrate_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/calibrate"
)

// fakeWork is a benchmark body on a fake clock: each iteration advances
// the clock by per, and the batches listed in slow take ten times as
// long (a neighbour's burst).
type fakeWork struct {
	now     time.Duration
	per     time.Duration
	batches int
	sizes   []int
	slow    map[int]bool
}

func (w *fakeWork) clock() (time.Duration, error) { return w.now, nil }

func (w *fakeWork) run(n int) (float64, error) {
	d := time.Duration(n) * w.per
	if w.slow[w.batches] {
		d *= 10
	}
	w.now += d
	w.batches++
	w.sizes = append(w.sizes, n)
	return float64(n), nil
}

var _ = Describe("a run's timed batches", func() {
	It("grows a batch until it lasts the batch time, then takes the median batch, so that a slow batch does not move the figure", func() {
		w := &fakeWork{per: 7 * time.Nanosecond, slow: map[int]bool{}}
		// Batches 0-? size the batch; mark two of the timed ones slow:
		// find the sizing's length first with a dry run.
		dry := &fakeWork{per: w.per, slow: map[int]bool{}}
		_, _, err := calibrate.TimeBatches(0, time.Millisecond, dry.clock, dry.run)
		Expect(err).NotTo(HaveOccurred())
		timed := 0
		for _, n := range dry.sizes {
			if n == dry.sizes[len(dry.sizes)-1] {
				timed++
			}
		}
		sizing := len(dry.sizes) - timed
		Expect(timed).To(BeNumerically(">=", 5)) // the sizing's last batch and the five timed
		w.slow[sizing+1], w.slow[sizing+3] = true, true
		per, units, err := calibrate.TimeBatches(0, time.Millisecond, w.clock, w.run)
		Expect(err).NotTo(HaveOccurred())
		// The last sizing batch lasted at least the batch time.
		last := w.sizes[len(w.sizes)-1]
		Expect(time.Duration(last) * w.per).To(BeNumerically(">=", time.Millisecond))
		// Two slow batches of five: the median is a normal one.
		Expect(per).To(BeNumerically("~", 7, 1e-9))
		// The units are the timed batches' only.
		Expect(units).To(BeNumerically("==", float64(5*last)))
	})

	It("refuses a batch that did no work", func() {
		w := &fakeWork{per: time.Millisecond}
		_, _, err := calibrate.TimeBatches(0, time.Millisecond, w.clock, func(n int) (float64, error) {
			w.run(n)
			return 0, nil
		})
		Expect(err).To(MatchError(ContainSubstring("did no work")))
	})
})
