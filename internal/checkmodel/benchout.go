package checkmodel

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// BenchResult is one redis-benchmark test's summary as --csv prints it
// (redis-benchmark.c, showLatencyReport with config.csv: "test","rps",
// "avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
// "p99_latency_ms","max_latency_ms", since Redis 7.0).
type BenchResult struct {
	Test  string
	RPS   float64
	AvgMS float64
	MinMS float64
	P50MS float64
	P95MS float64
	P99MS float64
	MaxMS float64
}

// maxCSVBytes bounds what ParseCSV reads: a real summary is a few
// hundred bytes per test.
const maxCSVBytes = 1 << 20

// csvColumns are the columns ParseCSV needs, by header name, and where
// each goes.
var csvColumns = []string{"test", "rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "max_latency_ms"}

// ParseCSV reads redis-benchmark --csv output: a header line and one row
// per test. Columns are found by their header names, so an older or newer
// redis-benchmark with more columns still parses; one without the
// latency columns (Redis 6 prints only "test","rps") is refused, naming
// what is missing. Errors name the line.
func ParseCSV(data []byte) ([]BenchResult, error) {
	if len(data) > maxCSVBytes {
		return nil, fmt.Errorf("redis-benchmark csv: %d bytes, over the limit of %d", len(data), maxCSVBytes)
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("redis-benchmark csv: empty output (did the benchmark run?)")
	}
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark csv: header: %w", err)
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(h)] = i
	}
	var missing []string
	for _, c := range csvColumns {
		if _, ok := idx[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("redis-benchmark csv: line 1: header %q lacks %s (redis-benchmark 7.0 or later prints them)",
			strings.Join(header, ","), strings.Join(missing, ", "))
	}
	var out []BenchResult
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("redis-benchmark csv: %w", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) < len(header) {
			return nil, fmt.Errorf("redis-benchmark csv: line %d: %d fields, the header has %d", line, len(rec), len(header))
		}
		res := BenchResult{Test: strings.TrimSpace(rec[idx["test"]])}
		if res.Test == "" {
			return nil, fmt.Errorf("redis-benchmark csv: line %d: empty test name", line)
		}
		for _, f := range []struct {
			col string
			dst *float64
		}{{"rps", &res.RPS}, {"avg_latency_ms", &res.AvgMS}, {"min_latency_ms", &res.MinMS},
			{"p50_latency_ms", &res.P50MS}, {"p95_latency_ms", &res.P95MS}, {"p99_latency_ms", &res.P99MS},
			{"max_latency_ms", &res.MaxMS}} {
			s := strings.TrimSpace(rec[idx[f.col]])
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return nil, fmt.Errorf("redis-benchmark csv: line %d: %s %q is not a finite number of 0 or more", line, f.col, s)
			}
			*f.dst = v
		}
		out = append(out, res)
	}
	if len(out) == 0 {
		return nil, errors.New("redis-benchmark csv: a header and no test (the benchmark stopped before its summary)")
	}
	return out, nil
}

// Find returns the result of the test named name (SET, GET ...).
func Find(rs []BenchResult, name string) (BenchResult, bool) {
	for _, r := range rs {
		if strings.EqualFold(r.Test, name) {
			return r, true
		}
	}
	return BenchResult{}, false
}
