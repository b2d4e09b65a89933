package calibrate_test

import (
	"math"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/calibrate"
)

var _ = Describe("statistics", func() {
	It("summarizes runs by median, quartiles, min, max and relative spread", func() {
		s, err := calibrate.Summarize([]float64{105, 100, 95, 110, 90})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Runs).To(Equal(5))
		Expect(s.Median).To(Equal(100.0))
		Expect(s.Min).To(Equal(90.0))
		Expect(s.Max).To(Equal(110.0))
		Expect(s.Q1).To(Equal(95.0))
		Expect(s.Q3).To(Equal(105.0))
		Expect(s.Spread()).To(BeNumerically("~", 0.10, 1e-12))
		Expect(s.Range()).To(BeNumerically("~", 0.20, 1e-12))
		Expect(s.String()).To(ContainSubstring("median 100 over 5 runs, spread 10.0% (interquartile range 95 to 105 over the median), min 90, max 110 (range 20.0%)"))
	})

	It("spreads by the interquartile range, so that one disturbed run in nine does not make a steady benchmark noisy", func() {
		// Eight runs within 2% and one a neighbour slowed by 40%: the
		// range is 41%, the interquartile range 1%.
		s, err := calibrate.Summarize([]float64{100, 101, 99, 100, 140, 100, 101, 99, 100})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Range()).To(BeNumerically("~", 0.41, 1e-12))
		Expect(s.Spread()).To(BeNumerically("~", 0.01, 1e-12))
		Expect(calibrate.DefaultRule().Noisy(s)).To(BeFalse())
		// Runs that really wander are noisy.
		s, err = calibrate.Summarize([]float64{100, 110, 90, 120, 80, 105, 95, 115, 85})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Spread()).To(BeNumerically(">", 0.05))
		Expect(calibrate.DefaultRule().Noisy(s)).To(BeTrue())
	})

	It("takes the mean of the middle two for an even number of runs, and leaves the samples alone", func() {
		in := []float64{4, 1, 3, 2}
		s, err := calibrate.Summarize(in)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Median).To(Equal(2.5))
		Expect(in).To(Equal([]float64{4, 1, 3, 2}))
	})

	It("gives a single run no spread", func() {
		s, err := calibrate.Summarize([]float64{7})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Spread()).To(BeZero())
	})

	It("refuses no samples and samples that are not finite", func() {
		_, err := calibrate.Summarize(nil)
		Expect(err).To(HaveOccurred())
		_, err = calibrate.Summarize([]float64{1, math.NaN()})
		Expect(err).To(MatchError(ContainSubstring("not a finite number")))
		_, err = calibrate.Summarize([]float64{math.Inf(1)})
		Expect(err).To(HaveOccurred())
	})

	It("recovers a cost per call and per ready event from four points", func() {
		xs := []float64{0, 1, 16, 64}
		ys := make([]float64, len(xs))
		for i, x := range xs {
			ys[i] = 150 + 70*x
		}
		l, err := calibrate.FitLine(xs, ys)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Intercept).To(BeNumerically("~", 150, 1e-9))
		Expect(l.Slope).To(BeNumerically("~", 70, 1e-9))
		Expect(l.R2).To(BeNumerically("~", 1, 1e-12))
	})

	It("fits noisy points by least squares, with R² below 1", func() {
		l, err := calibrate.FitLine([]float64{0, 1, 2, 3}, []float64{1, 3, 2, 4})
		Expect(err).NotTo(HaveOccurred())
		// Slope = Sxy/Sxx = 4/5 over x mean 1.5 and y mean 2.5.
		Expect(l.Slope).To(BeNumerically("~", 0.8, 1e-12))
		Expect(l.Intercept).To(BeNumerically("~", 1.3, 1e-12))
		Expect(l.R2).To(BeNumerically("<", 1))
	})

	It("refuses a fit it cannot make", func() {
		_, err := calibrate.FitLine([]float64{1}, []float64{1})
		Expect(err).To(HaveOccurred())
		_, err = calibrate.FitLine([]float64{2, 2}, []float64{1, 3})
		Expect(err).To(MatchError(ContainSubstring("every x is the same")))
		_, err = calibrate.FitLine([]float64{1, 2}, []float64{1})
		Expect(err).To(HaveOccurred())
	})
})

var _ = Describe("machine readings", func() {
	It("reads total, idle and steal jiffies from /proc/stat's cpu line", func() {
		total, idle, steal, err := calibrate.ParseStat([]byte("cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 1 2 3 4 5 6 7 8 9 0\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(total).To(BeEquivalentTo(100 + 5 + 50 + 800 + 20 + 3 + 2 + 10)) // guest is inside user
		Expect(idle).To(BeEquivalentTo(820))
		Expect(steal).To(BeEquivalentTo(10))
	})

	It("names what is wrong with a /proc/stat it cannot read", func() {
		_, _, _, err := calibrate.ParseStat([]byte("intr 1 2 3\n"))
		Expect(err).To(MatchError(ContainSubstring("not the cpu line")))
		_, _, _, err = calibrate.ParseStat([]byte("cpu 1 2 x 4 5 6 7 8\n"))
		Expect(err).To(MatchError(ContainSubstring("field 3")))
	})

	It("makes a deterministic, compressible corpus", func() {
		a, b := calibrate.Corpus(4096), calibrate.Corpus(4096)
		Expect(a).To(HaveLen(4096))
		Expect(a).To(Equal(b))
	})
})
