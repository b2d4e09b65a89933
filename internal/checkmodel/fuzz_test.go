package checkmodel_test

import (
	"math"
	"os"
	"testing"

	"github.com/savanna-sim/savanna/internal/checkmodel"
)

// FuzzParseCSV feeds redis-benchmark output of any shape: the parser
// returns results or an error, never panics, and every result it returns
// is finite and not negative.
func FuzzParseCSV(f *testing.F) {
	for _, p := range []string{"testdata/redis-benchmark-7.0.15-set.csv", "testdata/redis-benchmark-6-set.csv", "testdata/redis-benchmark-7.0.15-get-q.txt"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(header + "\n\"SET\",\"1e308\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := checkmodel.ParseCSV(data)
		if err != nil {
			return
		}
		for _, r := range rs {
			for _, v := range []float64{r.RPS, r.AvgMS, r.MinMS, r.P50MS, r.P95MS, r.P99MS, r.MaxMS} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("%+v: a figure that is not finite and not negative", r)
				}
			}
			if r.Test == "" {
				t.Fatalf("%+v: no name", r)
			}
		}
	})
}

// FuzzParseStat feeds /proc/PID/stat lines of any shape.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1234 (redis-server) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 5 0 100 1000 10"))
	f.Add([]byte("1 ()) S 1 1 1 0 -1 0 0 0 0 0 1 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := checkmodel.ParseStat(data)
		if err == nil && d < 0 {
			t.Fatalf("%q: negative CPU time %v", data, d)
		}
	})
}

// FuzzParseWrk feeds wrk output of any shape: the parser returns a
// result or an error, never panics, and every figure it returns is
// finite and not negative, with a duration wherever there are requests.
func FuzzParseWrk(f *testing.F) {
	for _, p := range []string{"testdata/wrk-4.1.0-c1000.txt", "testdata/wrk-4.1.0-no-script.txt"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(wrkLines))
	f.Add([]byte("savanna-wrk-latency mean_us=1e308 stdev_us=0 min_us=0 p50_us=0 p90_us=0 p99_us=0 max_us=0\nsavanna-wrk requests=="))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := checkmodel.ParseWrk(data)
		if err != nil {
			return
		}
		for _, v := range []float64{r.MeanUS, r.StdevUS, r.MinUS, r.P50US, r.P90US, r.P99US, r.MaxUS, r.RPS()} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%+v: a figure that is not finite and not negative", r)
			}
		}
		if r.Requests > 0 && r.DurationUS == 0 {
			t.Fatalf("%+v: requests without a duration", r)
		}
	})
}
