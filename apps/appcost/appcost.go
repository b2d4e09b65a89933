// Package appcost names the cost operations that several applications
// charge (apps/http, apps/redis, apps/oltp): work given directly in
// nanoseconds and protocol text scanned. An application's own operations
// are its own (redis.CostCommand, http.CostRequest).
package appcost

import "github.com/savanna-sim/savanna/hw"

// The applications' shared operations (range hw.OpsApps).
const (
	Nanos     = hw.OpsApps + iota // application work given directly in nanoseconds
	ParseByte                     // one byte of protocol text scanned
)

// CostOps returns the applications' shared operations for the run's
// table (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsApps, Ops: []hw.CostOpInfo{
		{Op: Nanos, Key: "app_nanos", Doc: "application work given directly in nanoseconds"},
		{Op: ParseByte, Key: "parse_byte", Doc: "one byte of protocol text scanned"},
	}}
}
