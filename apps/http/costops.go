package http

import "github.com/savanna-sim/savanna/hw"

// The HTTP server's and wrk's operations (range hw.OpsHTTP). The bytes
// either scans and the configured per-request CPU are appcost's; wrk's
// socket calls and epoll are lstack's.
const (
	CostRequest     = hw.OpsHTTP + iota // parse one HTTP request and build its headers
	CostWrkRequest                      // wrk issues one request
	CostWrkResponse                     // wrk takes one response
)

// CostOps returns the HTTP server's and wrk's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsHTTP, Ops: []hw.CostOpInfo{
		{Op: CostRequest, Key: "http_request", Doc: "parse one HTTP request and build its headers"},
		{Op: CostWrkRequest, Key: "wrk_request", Doc: "wrk issues one request (prebuilt buffer, clock read)"},
		{Op: CostWrkResponse, Key: "wrk_response", Doc: "wrk takes one response (parser state, latency recorded)"},
	}}
}
