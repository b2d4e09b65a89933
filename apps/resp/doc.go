// Package resp is Redis's serialization protocol (RESP2) as a sans-I/O
// engine: parsers for requests and replies that work on whatever bytes
// have arrived (ParseCommand for a whole buffer; Parser for a stream,
// which keeps its place, so that a request in pieces costs work linear
// in its size, and asks a Budget before it allocates), writers for
// replies and commands, and a key-value Store that executes the commands
// redis-benchmark and redis-cli use, keeps an account of its memory and
// tells what a command will cost before it runs (Footprint). Servers and
// load generators on any transport (Go's net, Savanna's stack in real or
// virtual time) build on it.
//
// The protocol is https://redis.io/docs/latest/develop/reference/protocol-spec/.
package resp
