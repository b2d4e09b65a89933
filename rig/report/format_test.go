package report_test

import (
	"math"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/rig/report"
)

// nb is the digit-group separator, a narrow no-break space.
const nb = "\u202f"

var _ = Describe("the number format", func() {
	DescribeTable("prints a figure without a unit",
		func(v float64, want string) { Expect(report.FormatNumber(v)).To(Equal(want)) },
		Entry("zero", 0.0, "0"),
		Entry("negative zero", math.Copysign(0, -1), "0"),
		Entry("a small integer", 42.0, "42"),
		Entry("four digits, not grouped", 2048.0, "2048"),
		Entry("five digits, grouped", 12345.0, "12"+nb+"345"),
		Entry("an integer stored as a float", 1155700.0, "1"+nb+"155"+nb+"700"),
		Entry("a negative integer", -1234567.0, "-1"+nb+"234"+nb+"567"),
		Entry("a fraction", 21.967, "21.97"),
		Entry("below one", 0.534527, "0.5345"),
		Entry("trailing zeros dropped", 2.5, "2.5"),
		Entry("a negative fraction", -0.0012346, "-0.001235"),
		Entry("small", 0.000012346, "0.00001235"),
		Entry("a non-integer above 1000 rounds to the units digit", 1967276.6, "1"+nb+"967"+nb+"277"),
		Entry("rounding up to 1000", 999.96, "1000"),
		Entry("%g's example", 1.97587e+06, "1"+nb+"975"+nb+"870"),
		Entry("huge", 1.2345678e18, "1.235×10¹⁸"),
		Entry("huge and negative", -3e300, "-3×10³⁰⁰"),
		Entry("tiny", 1.5e-9, "1.5×10⁻⁹"),
		Entry("the smallest float", math.SmallestNonzeroFloat64, "4.941×10⁻³²⁴"),
		Entry("the largest float", math.MaxFloat64, "1.798×10³⁰⁸"),
		Entry("NaN", math.NaN(), "NaN"),
		Entry("+Inf", math.Inf(1), "+Inf"),
		Entry("-Inf", math.Inf(-1), "-Inf"),
	)

	DescribeTable("prints a figure with the unit its name ends in, with an SI prefix",
		func(path string, v float64, want string) { Expect(report.FormatFigure(path, v)).To(Equal(want)) },
		Entry("microseconds", "pktgen.rtt.p99_us", 21.967, "21.97 µs"),
		Entry("milliseconds below one", "redis_benchmark.p99_ms", 0.534527, "534.5 µs"),
		Entry("nanoseconds, an integer", "server.cpu.all.busy_ns", 1976000000.0, "1.976 s"),
		Entry("a time named by its unit", "server.cpu.all.ops.nic_rx_burst.ns", 614846.0, "614.8 µs"),
		Entry("seconds", "sim.seconds", 0.02, "20 ms"),
		Entry("rounding up to the next prefix", "x.p50_us", 999.96, "1 ms"),
		Entry("many seconds", "x.up_s", 12345.6, "12"+nb+"346 s"),
		Entry("zero time", "x.wait_ns", 0.0, "0 s"),
		Entry("negative time", "x.skew_ms", -1.5, "-1.5 ms"),
		Entry("bytes", "http.shim.leaked_bytes", 15859712.0, "15.86 MB"),
		Entry("bytes named in the middle", "http.shim.sw_bytes_in", 1500.0, "1.5 kB"),
		Entry("DPDK's byte counter", "server.nic.eth0.ibytes", 1200000.0, "1.2 MB"),
		Entry("few bytes", "x.rx_bytes", 512.0, "512 B"),
		Entry("percent", "server.cpu.all.busy_pct", 25.63, "25.63 %"),
		Entry("a rate per second is not a time", "x.bytes_per_s", 2500.0, "2500"),
		Entry("a rate", "redis_benchmark.SET.rps", 1967276.6, "1"+nb+"967"+nb+"277"),
		Entry("NaN with a unit", "x.p99_us", math.NaN(), "NaN"),
		Entry("Inf with a unit", "x.p99_us", math.Inf(1), "+Inf"),
	)
})

// FuzzFormatNumber checks that no value prints Go's exponent form or
// panics.
func FuzzFormatNumber(f *testing.F) {
	for _, v := range []float64{0, 1, -1, 1e15, 1e-7, 999.95, 1.97587e+06, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		for _, s := range []string{report.FormatNumber(v), report.FormatFigure("x.p99_us", v), report.FormatFigure("x.rx_bytes", v)} {
			if strings.ContainsAny(s, "eE") && !strings.Contains(s, "Inf") {
				t.Fatalf("%v prints %q", v, s)
			}
		}
	})
}
