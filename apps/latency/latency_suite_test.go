package latency_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/apps/latency"
)

func TestLatency(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "latency Suite")
}

var _ = Describe("the recorder", func() {
	It("reports percentiles within HDR's three significant digits", func() {
		r := latency.New()
		for i := 1; i <= 1000; i++ {
			r.Record(time.Duration(i) * time.Microsecond)
		}
		s := r.Summary()
		Expect(s.Count).To(BeEquivalentTo(1000))
		Expect(s.P50US).To(BeNumerically("~", 500, 1))
		Expect(s.P99US).To(BeNumerically("~", 990, 1))
		Expect(s.MaxUS).To(BeNumerically("~", 1000, 1))
		lat, cum := r.Distribution()
		Expect(cum[len(cum)-1]).To(Equal(1.0))
		Expect(lat[0]).To(BeNumerically("<=", 2*time.Microsecond))
	})

	It("adds the samples a stalled open-loop generator hid (coordinated omission)", func() {
		r := latency.New()
		r.RecordCorrected(100*time.Millisecond, 10*time.Millisecond)
		Expect(r.Count()).To(BeEquivalentTo(10))
		r.Reset()
		Expect(r.Count()).To(BeZero())
	})
})
