// Package kv is a RESP2 key-value server (the subset of Redis that
// redis-benchmark and redis-cli use: PING, ECHO, SET, GET, DEL, INCR,
// INCRBY, DECR, MSET, MGET, EXISTS, DBSIZE, FLUSHALL/FLUSHDB, SELECT,
// QUIT, CONFIG GET, COMMAND / COMMAND DOCS), over any net.Listener: the
// kernel's net package or Savanna's stack/gonet.
//
// The protocol is the Redis Serialization Protocol version 2
// (https://redis.io/docs/latest/develop/reference/protocol-spec/):
// commands are arrays of bulk strings, or inline commands split on
// spaces. Parsing and the command table are apps/resp's (resp.Parser,
// resumable, and resp.Store, shared with the Savanna-stack redis
// server); this package adds the blocking stream around them: the
// Reader feeds what arrives to the parser, which keeps its place, so a
// command in pieces is parsed once, and reads a big argument straight
// into its one allocation; replies are buffered and written when no
// more input is buffered, as Redis does.
//
// No peer can make the server run out of memory (issue 17). Limits
// holds Redis's limits with bounded defaults (proto-max-bulk-len,
// client-query-buffer-limit, maxmemory, client-output-buffer-limit,
// maxclients, timeout); the server keeps its own account of the bytes it
// holds (the store, every client's query and output buffers) and grants
// each allocation within maxmemory before making it, so the account
// never exceeds MaxMemory + ConnAllowance per open client. Writes that
// would pass maxmemory get Redis's -OOM; a client whose buffer cannot be
// granted, that passes a client limit or stays idle past the timeout is
// closed; a client past maxclients is refused. Each is counted in Stats.
// An absurd length gets "-ERR Protocol error" and the connection is
// closed, as Redis does, and nothing panics on bad input.
package kv
