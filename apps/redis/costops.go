package redis

import "github.com/savanna-sim/savanna/hw"

// The Redis server's operations (range hw.OpsRedis). The bytes it scans
// are appcost.ParseByte.
const (
	CostCommand = hw.OpsRedis + iota // parse and execute one RESP command
)

// CostOps returns the Redis server's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsRedis, Ops: []hw.CostOpInfo{
		{Op: CostCommand, Key: "resp_command", Doc: "parse and execute one RESP command"},
	}}
}
