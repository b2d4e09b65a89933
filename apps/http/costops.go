package http

import "github.com/savanna-sim/savanna/hw"

// The HTTP server's operations (range hw.OpsHTTP). The bytes it scans
// and the configured per-request CPU are appcost's.
const (
	CostRequest = hw.OpsHTTP + iota // parse one HTTP request and build its headers
)

// CostOps returns the HTTP server's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsHTTP, Ops: []hw.CostOpInfo{
		{Op: CostRequest, Key: "http_request", Doc: "parse one HTTP request and build its headers"},
	}}
}
