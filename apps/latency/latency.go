// Package latency records latencies in an HDR histogram
// (github.com/HdrHistogram/hdrhistogram-go) and reports the percentiles
// that load generators print: what redis-benchmark, wrk and pktgen users
// read.
package latency

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Recorder is a latency histogram from 1 ns to 100 s with three
// significant digits.
type Recorder struct {
	h *hdr.Histogram
}

// New returns an empty recorder.
func New() *Recorder {
	return &Recorder{h: hdr.New(1, int64(100*time.Second), 3)}
}

// Record adds one latency. Values outside the range are clamped, so a
// measurement is never lost.
func (r *Recorder) Record(d time.Duration) {
	v := max(int64(d), 1)
	v = min(v, r.h.HighestTrackableValue())
	_ = r.h.RecordValue(v)
}

// RecordCorrected adds one latency measured by a generator that sends at
// a fixed interval, adding the samples a stalled response hid: wrk2's
// correction for coordinated omission.
func (r *Recorder) RecordCorrected(d, interval time.Duration) {
	v := max(int64(d), 1)
	v = min(v, r.h.HighestTrackableValue())
	_ = r.h.RecordCorrectedValue(v, int64(interval))
}

// Reset empties the recorder (the end of a warm-up).
func (r *Recorder) Reset() { r.h.Reset() }

// Count is the number of samples.
func (r *Recorder) Count() int64 { return r.h.TotalCount() }

// Quantile returns the latency at quantile q (0..100).
func (r *Recorder) Quantile(q float64) time.Duration {
	return time.Duration(r.h.ValueAtQuantile(q))
}

// Summary is the percentile summary reports carry, in microseconds.
type Summary struct {
	Count  int64   `json:"count"`
	MeanUS float64 `json:"mean_us"`
	P50US  float64 `json:"p50_us"`
	P90US  float64 `json:"p90_us"`
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"`
	MaxUS  float64 `json:"max_us"`
}

// Summary returns the recorder's percentiles.
func (r *Recorder) Summary() Summary {
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return Summary{
		Count:  r.h.TotalCount(),
		MeanUS: r.h.Mean() / 1e3,
		P50US:  us(r.h.ValueAtQuantile(50)),
		P90US:  us(r.h.ValueAtQuantile(90)),
		P99US:  us(r.h.ValueAtQuantile(99)),
		P999US: us(r.h.ValueAtQuantile(99.9)),
		MaxUS:  us(r.h.Max()),
	}
}

// Distribution returns (latency, cumulative fraction) points for a CDF
// plot, one per histogram bucket that holds samples.
func (r *Recorder) Distribution() (lat []time.Duration, cum []float64) {
	total := float64(r.h.TotalCount())
	if total == 0 {
		return nil, nil
	}
	var seen int64
	for _, b := range r.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		seen += b.Count
		lat = append(lat, time.Duration(b.To))
		cum = append(cum, float64(seen)/total)
	}
	return lat, cum
}
