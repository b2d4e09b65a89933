// Package kv is a RESP2 key-value server (the subset of Redis that
// redis-benchmark and redis-cli use: PING, ECHO, SET, GET, DEL, INCR,
// INCRBY, DECR, MSET, MGET, EXISTS, DBSIZE, FLUSHALL/FLUSHDB, SELECT,
// QUIT, CONFIG GET, COMMAND / COMMAND DOCS), over any net.Listener: the
// kernel's net package or Savanna's stack/gonet.
//
// The protocol is the Redis Serialization Protocol version 2
// (https://redis.io/docs/latest/develop/reference/protocol-spec/):
// commands are arrays of bulk strings, or inline commands split on
// spaces. Parsing, reply writing and the command table are apps/resp's
// (resp.ParseCommandLimits and resp.Store, shared with the Savanna-stack
// redis server); this package adds the blocking stream around them: the
// Reader buffers partial reads and pipelined commands, and replies are
// buffered and flushed when no more input is buffered, as Redis does.
// Lengths are bounded (Limits); an absurd length gets "-ERR Protocol
// error" and the connection is closed, as Redis does, and nothing panics
// on bad input.
package kv
