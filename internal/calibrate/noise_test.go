package calibrate_test

import (
	"errors"
	"fmt"
	"runtime/debug"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/calibrate"
)

// fakeProbe returns before, then after.
type fakeProbe struct {
	samples []calibrate.LoadSample
	calls   int
}

func (p *fakeProbe) Sample() (calibrate.LoadSample, error) {
	s := p.samples[min(p.calls, len(p.samples)-1)]
	p.calls++
	return s, nil
}

func quiet() calibrate.LoadSample {
	return calibrate.LoadSample{Load1: 0.1, CPUs: 2, Others: 0.02, WallPerCPU: 1.0}
}

func busy() calibrate.LoadSample {
	return calibrate.LoadSample{Load1: 3, CPUs: 2, Others: 0.9, Steal: 0.05, WallPerCPU: 2.0}
}

// fakeBench returns the given values run after run.
func fakeBench(name string, values ...float64) calibrate.Bench {
	i := 0
	return calibrate.Bench{Name: name, Unit: "ns/call", What: "a fake " + name,
		Run: func(float64) (calibrate.Sample, error) {
			v := values[i%len(values)]
			i++
			return calibrate.Sample{Value: v}, nil
		}}
}

func runWith(probe calibrate.Probe, force bool, benches ...calibrate.Bench) (*calibrate.Result, error) {
	return calibrate.Run(calibrate.Options{Runs: 5, Force: force, Benches: benches, Probe: probe,
		Machine: calibrate.Machine{CPU: "Test CPU", CPUs: 2, Kernel: "6.1 x86_64", Go: "go1.x", Date: "2026-01-01"}})
}

var _ = Describe("the noise rule", func() {
	rule := calibrate.DefaultRule()

	It("finds a quiet machine quiet", func() {
		Expect(rule.Busy(quiet(), true)).To(BeEmpty())
		Expect(rule.Busy(quiet(), false)).To(BeEmpty())
	})

	It("names every reason a machine is too busy", func() {
		why := rule.Busy(busy(), true)
		Expect(why).To(HaveLen(4))
		Expect(why[0]).To(ContainSubstring("load average 3.00"))
		Expect(why[1]).To(ContainSubstring("other processes used 90%"))
		Expect(why[2]).To(ContainSubstring("stole 5.0%"))
		Expect(why[3]).To(ContainSubstring("2.00×"))
	})

	It("does not hold the load average against the machine after the benchmarks, which raised it", func() {
		s := quiet()
		s.Load1 = 2.5
		Expect(rule.Busy(s, true)).To(HaveLen(1))
		Expect(rule.Busy(s, false)).To(BeEmpty())
	})

	It("marks a benchmark whose runs spread more than 5% noisy, and one that does not, not", func() {
		r, err := runWith(&fakeProbe{samples: []calibrate.LoadSample{quiet()}}, false,
			fakeBench("steady", 100, 101, 99, 100, 102), fakeBench("jumpy", 100, 140, 90, 110, 80))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Measurements[0].Noisy).To(BeFalse())
		// 99 100 100 101 102: quartiles 100 and 101.
		Expect(r.Measurements[0].Summary.Spread()).To(BeNumerically("~", 0.01, 1e-12))
		Expect(r.Measurements[1].Noisy).To(BeTrue())
		// 80 90 100 110 140: quartiles 90 and 110.
		Expect(r.Measurements[1].Summary.Spread()).To(BeNumerically("~", 0.2, 1e-12))
		Expect(r.Forced()).To(BeFalse())
	})

	It("runs every benchmark nine times by default, interleaved, with the garbage collector stopped", func() {
		var order []string
		gc := []int{}
		before := debug.SetGCPercent(-1)
		debug.SetGCPercent(before)
		mk := func(name string) calibrate.Bench {
			return calibrate.Bench{Name: name, Run: func(float64) (calibrate.Sample, error) {
				order = append(order, name)
				gc = append(gc, debug.SetGCPercent(-1))
				return calibrate.Sample{Value: 1}, nil
			}}
		}
		r, err := calibrate.Run(calibrate.Options{Benches: []calibrate.Bench{mk("a"), mk("b")},
			Probe: &fakeProbe{samples: []calibrate.LoadSample{quiet()}}, Machine: calibrate.Machine{CPU: "Test CPU", Date: "2026-01-01"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Runs).To(Equal(9))
		Expect(order).To(HaveLen(18))
		Expect(order[:4]).To(Equal([]string{"a", "b", "a", "b"}))
		// Inside a run the collector is off (SetGCPercent returns the
		// setting it replaces); after the runs it is back.
		for _, g := range gc {
			Expect(g).To(Equal(-1))
		}
		Expect(debug.SetGCPercent(before)).To(Equal(before))
	})

	It("refuses before measuring on a busy machine", func() {
		ran := 0
		b := calibrate.Bench{Name: "counted", Run: func(float64) (calibrate.Sample, error) { ran++; return calibrate.Sample{Value: 1}, nil }}
		_, err := runWith(&fakeProbe{samples: []calibrate.LoadSample{busy()}}, false, b)
		var be *calibrate.BusyError
		Expect(errors.As(err, &be)).To(BeTrue())
		Expect(be.When).To(Equal("before"))
		Expect(err.Error()).To(ContainSubstring("--force"))
		Expect(ran).To(BeZero())
	})

	It("refuses when the machine became busy during the benchmarks", func() {
		_, err := runWith(&fakeProbe{samples: []calibrate.LoadSample{quiet(), busy()}}, false, fakeBench("steady", 100))
		var be *calibrate.BusyError
		Expect(errors.As(err, &be)).To(BeTrue())
		Expect(be.When).To(Equal("after"))
	})

	It("with --force measures anyway and marks every figure noisy, even a steady one", func() {
		r, err := runWith(&fakeProbe{samples: []calibrate.LoadSample{busy(), quiet()}}, true, fakeBench("steady", 100))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Forced()).To(BeTrue())
		Expect(r.Busy[0]).To(HavePrefix("before: "))
		Expect(r.Measurements[0].Noisy).To(BeTrue())
	})

	It("records a benchmark that cannot run here as skipped, with its reason, and one that fails as failed", func() {
		skip := calibrate.Bench{Name: "needs-two-cpus", Run: func(float64) (calibrate.Sample, error) {
			return calibrate.Sample{}, fmt.Errorf("pinning: %w", calibrate.Skip("only one CPU"))
		}}
		fail := calibrate.Bench{Name: "broken", Run: func(float64) (calibrate.Sample, error) {
			return calibrate.Sample{}, errors.New("socket: permission denied")
		}}
		r, err := runWith(&fakeProbe{samples: []calibrate.LoadSample{quiet()}}, false, skip, fail)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Measurements[0].Skipped).To(Equal("only one CPU"))
		Expect(r.Measurements[1].Skipped).To(Equal("failed: socket: permission denied"))
		Expect(r.Get("needs-two-cpus")).To(BeNil())
	})

	It("refuses a run count below one", func() {
		_, err := calibrate.Run(calibrate.Options{Runs: -1, Probe: &fakeProbe{samples: []calibrate.LoadSample{quiet()}}})
		Expect(err).To(MatchError(ContainSubstring("runs: -1")))
	})
})
