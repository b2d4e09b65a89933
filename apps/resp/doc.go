// Package resp is Redis's serialization protocol (RESP2) as a sans-I/O
// engine: an incremental parser for requests and replies that works on
// whatever bytes have arrived, writers for replies and commands, and a
// key-value Store that executes the commands redis-benchmark and
// redis-cli use. Servers and load generators on any transport (Go's net,
// Savanna's stack in real or virtual time) build on it.
//
// The protocol is https://redis.io/docs/latest/develop/reference/protocol-spec/.
package resp
