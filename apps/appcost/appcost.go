// Package appcost names the cost operations that several applications
// charge (apps/http, apps/redis, apps/oltp): work given directly in
// nanoseconds and protocol text scanned. An application's own operations
// are its own (redis.CostCommand, http.CostRequest); the OLTP client's
// are declared here because apps/oltp has no range of its own in hw.
package appcost

import "github.com/savanna-sim/savanna/hw"

// The applications' shared operations (range hw.OpsApps).
const (
	Nanos               = hw.OpsApps + iota // application work given directly in nanoseconds
	ParseByte                               // one byte of protocol text scanned
	OLTPClientStatement                     // the OLTP client builds and frames one statement
	OLTPClientResult                        // the OLTP client takes one statement's result
)

// CostOps returns the applications' shared operations for the run's
// table (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsApps, Ops: []hw.CostOpInfo{
		{Op: Nanos, Key: "app_nanos", Doc: "application work given directly in nanoseconds"},
		{Op: ParseByte, Key: "parse_byte", Doc: "one byte of protocol text scanned"},
		{Op: OLTPClientStatement, Key: "oltp_client_statement", Doc: "the OLTP client builds and frames one statement"},
		{Op: OLTPClientResult, Key: "oltp_client_result", Doc: "the OLTP client takes one statement's result"},
	}}
}
