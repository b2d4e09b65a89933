package checkmodel_test

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
)

// wrkLines are the script's two lines with every key, for the table
// below to break one at a time.
const wrkLines = "savanna-wrk requests=100 duration_us=2000000 bytes=126400 connect_errors=0 read_errors=0 write_errors=0 status_errors=0 timeouts=0\n" +
	"savanna-wrk-latency mean_us=12.5 stdev_us=3 min_us=9 p50_us=12 p90_us=15 p99_us=30 max_us=80\n"

var _ = Describe("wrk's output with check-model's done() script", func() {
	It("reads what wrk 4.1.0 (Debian) printed at 1,000 connections, ignoring wrk's own summary and keys it does not know", func() {
		data, err := os.ReadFile("testdata/wrk-4.1.0-c1000.txt")
		Expect(err).NotTo(HaveOccurred())
		r, err := checkmodel.ParseWrk(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(r).To(Equal(checkmodel.WrkResult{Requests: 19474, DurationUS: 2017777, Bytes: 24595662,
			MeanUS: 87873.332, StdevUS: 55626.519, MinUS: 7662, P50US: 75640, P90US: 147619, P99US: 281192, MaxUS: 281763}))
		// wrk's own "Requests/sec: 9651.22" is the same quotient.
		Expect(r.RPS()).To(BeNumerically("~", 9651.22, 0.01))
		Expect(r.Errors()).To(BeZero())
	})

	It("adds every kind of error wrk counts", func() {
		r, err := checkmodel.ParseWrk([]byte("savanna-wrk requests=5 duration_us=1 bytes=0 connect_errors=1 read_errors=2 write_errors=3 status_errors=4 timeouts=5\n" +
			"savanna-wrk-latency mean_us=1 stdev_us=0 min_us=1 p50_us=1 p90_us=1 p99_us=1 max_us=1\n"))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Errors()).To(Equal(uint64(15)))
	})

	It("refuses wrk's output without the script's lines, saying what to check", func() {
		data, err := os.ReadFile("testdata/wrk-4.1.0-no-script.txt")
		Expect(err).NotTo(HaveOccurred())
		_, err = checkmodel.ParseWrk(data)
		Expect(err).To(MatchError(ContainSubstring("no savanna-wrk line")))
		Expect(err).To(MatchError(ContainSubstring("-s")))
	})

	DescribeTable("refuses a bad summary, naming the line and the key",
		func(in, want string) {
			_, err := checkmodel.ParseWrk([]byte(in))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("empty", "", "no savanna-wrk line"),
		Entry("no latency line", "savanna-wrk requests=1 duration_us=1 bytes=1 connect_errors=0 read_errors=0 write_errors=0 status_errors=0 timeouts=0\n", "no savanna-wrk-latency line"),
		Entry("a key missing", "Running 2s test\n"+wrkLines[:len("savanna-wrk requests=100 ")]+"bytes=1 connect_errors=0 read_errors=0 write_errors=0 status_errors=0 timeouts=0\n",
			"line 2: savanna-wrk lacks duration_us"),
		Entry("a count that is not whole", "savanna-wrk requests=1.5"+wrkLines[len("savanna-wrk requests=100"):], `line 1: requests "1.5"`),
		Entry("a negative count", "savanna-wrk requests=-1"+wrkLines[len("savanna-wrk requests=100"):], `requests "-1"`),
		Entry("NaN latency", wrkLines[:len(wrkLines)-len("max_us=80\n")]+"max_us=NaN\n", `line 2: max_us "NaN" is not a finite number`),
		Entry("negative latency", wrkLines[:len(wrkLines)-len("max_us=80\n")]+"max_us=-2\n", `max_us "-2"`),
		Entry("not key=value", "savanna-wrk requests\n", `line 1: "requests" is not key=value`),
		Entry("twice", wrkLines+wrkLines, "line 3: a second savanna-wrk line (the first is line 1)"),
		Entry("requests in no time", "savanna-wrk requests=5 duration_us=0"+wrkLines[len("savanna-wrk requests=100 duration_us=2000000"):], "duration of 0 us"),
	)
})
