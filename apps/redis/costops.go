package redis

import "github.com/savanna-sim/savanna/hw"

// The Redis server's and redis-benchmark's operations (range
// hw.OpsRedis). The bytes either scans are appcost.ParseByte; the
// benchmark's socket calls and epoll are lstack's.
//
// A command's price is its dispatch, which every command pays
// (CostCommand: networking.c processInputBuffer's per-command work,
// server.c processCommand's lookupCommand and checks, call() and its
// statistics, and the reply's addReply into the client's buffer), plus
// its command procedure (t_string.c setCommand, getCommand, …): SET
// creates a string object for the value and adds it to the keyspace or
// replaces (and frees) the old one, GET looks the key up and replies
// with a bulk string, PING replies with a shared object.
const (
	CostCommand      = hw.OpsRedis + iota // dispatch one RESP command (every command)
	CostBenchRequest                      // redis-benchmark prepares one request
	CostBenchReply                        // redis-benchmark takes one reply
	CostCmdSet                            // SET's procedure
	CostCmdGet                            // GET's procedure
	CostCmdPing                           // PING's procedure
	CostCmdIncr                           // INCR's (and DECR's, INCRBY's) procedure
	CostCmdOther                          // any other command's procedure
)

// CostOps returns the Redis server's and benchmark's operations for the run's table
// (internal/costops).
func CostOps() hw.CostOpSet {
	return hw.CostOpSet{Base: hw.OpsRedis, Ops: []hw.CostOpInfo{
		{Op: CostCommand, Key: "resp_command", Doc: "dispatch one RESP command (processCommand, call, addReply), every command"},
		{Op: CostBenchRequest, Key: "bench_request", Doc: "redis-benchmark prepares one request (key randomized, clock read)"},
		{Op: CostBenchReply, Key: "bench_reply", Doc: "redis-benchmark takes one reply (reply object, latency recorded)"},
		{Op: CostCmdSet, Key: "redis_cmd_set", Doc: "SET's procedure (string object created, keyspace add or replace)"},
		{Op: CostCmdGet, Key: "redis_cmd_get", Doc: "GET's procedure (key lookup, bulk reply)"},
		{Op: CostCmdPing, Key: "redis_cmd_ping", Doc: "PING's procedure (a shared reply)"},
		{Op: CostCmdIncr, Key: "redis_cmd_incr", Doc: "INCR's procedure (integer parse, new object)"},
		{Op: CostCmdOther, Key: "redis_cmd_other", Doc: "another command's procedure"},
	}}
}

// commandOp is the procedure's operation of the command name names.
func commandOp(name string) hw.CostOp {
	switch name {
	case "SET":
		return CostCmdSet
	case "GET":
		return CostCmdGet
	case "PING":
		return CostCmdPing
	case "INCR", "DECR", "INCRBY", "DECRBY":
		return CostCmdIncr
	}
	return CostCmdOther
}
