package checkmodel

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// wrkScript is the done() script check-model runs wrk with (-s): it
// prints the lines ParseWrk reads.
//
//go:embed wrk.lua
var wrkScript string

// WrkResult is one wrk run's summary as wrk.lua's done() prints it: the
// counts of summary (wrk's SCRIPTING: requests, duration in
// microseconds, bytes, errors) and latency's mean, spread and
// percentiles in microseconds (wrk's stats.c: a count per microsecond
// up to --timeout, so a percentile is a whole microsecond).
type WrkResult struct {
	Requests, DurationUS, Bytes                 uint64
	ConnectErrors, ReadErrors, WriteErrors      uint64
	StatusErrors, Timeouts                      uint64
	MeanUS, StdevUS, MinUS, P50US, P90US, P99US float64
	MaxUS                                       float64
}

// RPS is the run's requests per second, as wrk's "Requests/sec" (its
// requests over its measured duration).
func (r WrkResult) RPS() float64 {
	if r.DurationUS == 0 {
		return 0
	}
	return float64(r.Requests) / (float64(r.DurationUS) / 1e6)
}

// Errors are the failed requests and connections of every kind wrk
// counts (socket errors and non-2xx/3xx responses).
func (r WrkResult) Errors() uint64 {
	return r.ConnectErrors + r.ReadErrors + r.WriteErrors + r.StatusErrors + r.Timeouts
}

// maxWrkBytes bounds what ParseWrk reads: wrk's summary and the script's
// two lines are well under a kilobyte.
const maxWrkBytes = 1 << 20

// The two lines wrk.lua prints, by their first word.
const (
	wrkLine        = "savanna-wrk"
	wrkLatencyLine = "savanna-wrk-latency"
)

// ParseWrk reads the lines wrk.lua's done() prints among wrk's own
// output (which it leaves alone: its units vary with the figure's size).
// Both lines must be there once; every key they need must be there with
// a finite number of 0 or more (counts whole). Keys it does not know are
// ignored, so a newer script may print more. Errors name the line and
// the key.
func ParseWrk(data []byte) (WrkResult, error) {
	var r WrkResult
	if len(data) > maxWrkBytes {
		return r, fmt.Errorf("wrk output: %d bytes, over the limit of %d", len(data), maxWrkBytes)
	}
	counts := []struct {
		key string
		dst *uint64
	}{{"requests", &r.Requests}, {"duration_us", &r.DurationUS}, {"bytes", &r.Bytes},
		{"connect_errors", &r.ConnectErrors}, {"read_errors", &r.ReadErrors}, {"write_errors", &r.WriteErrors},
		{"status_errors", &r.StatusErrors}, {"timeouts", &r.Timeouts}}
	lat := []struct {
		key string
		dst *float64
	}{{"mean_us", &r.MeanUS}, {"stdev_us", &r.StdevUS}, {"min_us", &r.MinUS}, {"p50_us", &r.P50US},
		{"p90_us", &r.P90US}, {"p99_us", &r.P99US}, {"max_us", &r.MaxUS}}
	seen := map[string]int{}
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		fields := strings.Fields(line)
		if len(fields) == 0 || (fields[0] != wrkLine && fields[0] != wrkLatencyLine) {
			continue
		}
		if prev, ok := seen[fields[0]]; ok {
			return r, fmt.Errorf("wrk output: line %d: a second %s line (the first is line %d)", n, fields[0], prev)
		}
		seen[fields[0]] = n
		kv := map[string]string{}
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok || k == "" {
				return r, fmt.Errorf("wrk output: line %d: %q is not key=value", n, f)
			}
			kv[k] = v
		}
		if fields[0] == wrkLine {
			for _, c := range counts {
				v, ok := kv[c.key]
				if !ok {
					return r, fmt.Errorf("wrk output: line %d: %s lacks %s", n, wrkLine, c.key)
				}
				x, err := strconv.ParseUint(v, 10, 63)
				if err != nil {
					return r, fmt.Errorf("wrk output: line %d: %s %q is not a whole number of 0 or more", n, c.key, v)
				}
				*c.dst = x
			}
			continue
		}
		for _, c := range lat {
			v, ok := kv[c.key]
			if !ok {
				return r, fmt.Errorf("wrk output: line %d: %s lacks %s", n, wrkLatencyLine, c.key)
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return r, fmt.Errorf("wrk output: line %d: %s %q is not a finite number of 0 or more", n, c.key, v)
			}
			*c.dst = x
		}
	}
	for _, l := range []string{wrkLine, wrkLatencyLine} {
		if _, ok := seen[l]; !ok {
			return r, fmt.Errorf("wrk output: no %s line (was wrk run with check-model's script, -s, and did it finish?)", l)
		}
	}
	if r.Requests > 0 && r.DurationUS == 0 {
		return r, errors.New("wrk output: requests over a duration of 0 us")
	}
	return r, nil
}

// littleMeanMS is the mean time from one request to the next on a
// connection of a closed loop of n connections at rps responses per
// second (Little's law), in milliseconds: the response time and the
// client's own turn between the response and its next request.
func littleMeanMS(n int, rps float64) float64 {
	if rps <= 0 {
		return 0
	}
	return float64(n) / rps * 1e3
}
