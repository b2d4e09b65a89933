package work

import "github.com/savanna-sim/savanna/bench/netw"

// Metric is one figure a workload reports.
type Metric struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
	// Higher says whether a higher value is better (throughput) or
	// not (CPU, latency, memory).
	Higher bool `json:"higher_is_better"`
}

// Result is one run of one workload on one network.
type Result struct {
	Workload string `json:"workload"`
	Network  string `json:"network"`
	MTU      int    `json:"mtu"`
	// Family is the address family, 4 or 6.
	Family int `json:"family"`
	// Timed is the timed part's wall and CPU time.
	Timed Span `json:"timed"`
	// Metrics are the workload's figures, in a fixed order.
	Metrics []Metric `json:"metrics"`
	// Drops are the losses during the timed part.
	Drops netw.Drops `json:"drops"`
	// Checked counts what was verified: bytes compared, replies
	// matched, connections completed.
	Checked int64 `json:"checked"`
}

// Metric returns the named metric's value (0 when absent).
func (r Result) Metric(name string) float64 {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return 0
}
