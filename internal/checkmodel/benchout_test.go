package checkmodel_test

import (
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/checkmodel"
)

var _ = Describe("redis-benchmark's --csv output", func() {
	It("reads the summary redis-benchmark 7.0.15 printed", func() {
		data, err := os.ReadFile("testdata/redis-benchmark-7.0.15-set.csv")
		Expect(err).NotTo(HaveOccurred())
		rs, err := checkmodel.ParseCSV(data)
		Expect(err).NotTo(HaveOccurred())
		Expect(rs).To(HaveLen(1))
		r, ok := checkmodel.Find(rs, "set")
		Expect(ok).To(BeTrue())
		Expect(r).To(Equal(checkmodel.BenchResult{Test: "SET", RPS: 114942.53, AvgMS: 0.066, MinMS: 0.024,
			P50MS: 0.063, P95MS: 0.095, P99MS: 0.175, MaxMS: 0.463}))
		_, ok = checkmodel.Find(rs, "GET")
		Expect(ok).To(BeFalse())
	})

	It("finds columns by their names, so an added column or another order still parses", func() {
		rs, err := checkmodel.ParseCSV([]byte(`"rps","test","extra","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"1000","GET","x","1","0.5","0.9","1.5","2","3"
`))
		Expect(err).NotTo(HaveOccurred())
		Expect(rs[0].Test).To(Equal("GET"))
		Expect(rs[0].RPS).To(Equal(1000.0))
		Expect(rs[0].P99MS).To(Equal(2.0))
	})

	It("refuses Redis 6's csv, which has no latency columns, naming them", func() {
		data, err := os.ReadFile("testdata/redis-benchmark-6-set.csv")
		Expect(err).NotTo(HaveOccurred())
		_, err = checkmodel.ParseCSV(data)
		Expect(err).To(MatchError(ContainSubstring("lacks avg_latency_ms")))
		Expect(err).To(MatchError(ContainSubstring("7.0 or later")))
	})

	It("refuses -q output, which is not csv", func() {
		data, err := os.ReadFile("testdata/redis-benchmark-7.0.15-get-q.txt")
		Expect(err).NotTo(HaveOccurred())
		_, err = checkmodel.ParseCSV(data)
		Expect(err).To(HaveOccurred())
	})

	DescribeTable("refuses a bad summary, naming the line",
		func(in, want string) {
			_, err := checkmodel.ParseCSV([]byte(in))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("empty", "", "empty output"),
		Entry("header only", header+"\n", "no test"),
		Entry("a number that is not", header+"\n\"SET\",\"fast\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", `line 2: rps "fast"`),
		Entry("NaN", header+"\n\"SET\",\"NaN\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", "not a finite number"),
		Entry("negative", header+"\n\"SET\",\"1\",\"-1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", "avg_latency_ms"),
		Entry("short row", header+"\n\"SET\",\"1\"\n", "line 2: 2 fields"),
		Entry("no name", header+"\n\"\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n", "empty test name"),
	)
})

const header = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"`

var _ = Describe("/proc/PID/stat", func() {
	It("adds utime and stime, in USER_HZ ticks, counting fields after a command name with spaces and parentheses", func() {
		line := "1234 (redis (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 5 0 100 1000 10 18446744073709551615\n"
		d, err := checkmodel.ParseStat([]byte(line))
		Expect(err).NotTo(HaveOccurred())
		Expect(d).To(Equal(287 * 10 * time.Millisecond))
	})

	It("reads this process's own", func() {
		d, err := checkmodel.ProcCPU(os.Getpid())
		Expect(err).NotTo(HaveOccurred())
		Expect(d).To(BeNumerically(">=", 0))
	})

	DescribeTable("refuses what is not a stat line",
		func(in, want string) {
			_, err := checkmodel.ParseStat([]byte(in))
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("no name", "1234 S 1", "no ')'"),
		Entry("short", "1 (a) S 1 2 3", "fields after the command name"),
		Entry("not a number", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 1 0", `field 14 "x"`),
		Entry("negative", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 1 -1 0", `field 15`),
		Entry("overflow", "1 (a) S 1 1 1 0 -1 0 0 0 0 0 4611686018427387903 1 0", "overflow"),
	)
})
