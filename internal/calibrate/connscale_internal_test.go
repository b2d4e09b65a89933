package calibrate

import (
	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = ginkgo.Describe("the working set's fit (connscale)", func() {
	ginkgo.It("recovers the per-socket bytes from the rise the model's own charge gives", func() {
		const miss, cache, sockets = 40.0, 2 << 20, 2048
		for _, b := range []float64{1536, 2176, 4096} {
			rise := connSegments * connMissesAt(b, cache, sockets) * miss
			got, ok := fitConnBytes(rise, miss, cache, sockets)
			Expect(ok).To(BeTrue())
			// The charge is a step in whole lines: the fit lands within
			// the line that gives the rise.
			Expect(got).To(BeNumerically("~", b, 64))
		}
	})

	ginkgo.It("refuses a rise no size explains: none, or beyond 64 KiB a socket", func() {
		_, ok := fitConnBytes(0, 40, 2<<20, 2048)
		Expect(ok).To(BeFalse())
		_, ok = fitConnBytes(-5, 40, 2<<20, 2048)
		Expect(ok).To(BeFalse())
		_, ok = fitConnBytes(1e9, 40, 2<<20, 2048)
		Expect(ok).To(BeFalse())
	})

	ginkgo.It("reads sysfs's cache sizes", func() {
		for in, want := range map[string]int64{"2048K": 2 << 20, "2M": 2 << 20, "512": 512} {
			got, err := parseCacheSize(in)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		}
		_, err := parseCacheSize("lots")
		Expect(err).To(HaveOccurred())
	})
})

var _ = ginkgo.Describe("the per-iteration timings (tails)", func() {
	ginkgo.It("gives one step's standard deviation, leaving the slowest thousandth out, and the untrimmed p99 over the mean", func() {
		ts := make([]float64, 0, 2000)
		for i := range 1000 {
			ts = append(ts, 100+float64(i%1), 300) // sd 100 about a mean of 200
		}
		ts[0] = 1e6 // one wait for another process's time slice
		ts[1] = 1e6
		s := tailSample(ts, 2)
		Expect(s.Value).To(BeNumerically("~", 100/1.41421356, 2))
		mean := (999*100 + 999*300 + 2e6) / 2000.0 // ts[0] was a 100, ts[1] a 300
		Expect(s.Extra["mean"]).To(BeNumerically("~", mean/2, 1e-6))
		Expect(s.Extra["p99_mean"]).To(BeNumerically("~", 300/mean, 1e-6))
	})
})
