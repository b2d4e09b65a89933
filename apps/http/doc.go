// Package http holds the two programs of the Tengine experiment as event
// loops on a stack instance's lcore: an HTTP/1.1 Server in Tengine's shape
// (one worker per lcore, keep-alive, gzip of responses through the zlib
// shim, a per-request CPU cost for everything else Tengine does, graceful
// reload) and a load generator in wrk's shape (closed loop, or open loop
// at a fixed rate as wrk2 with latencies corrected for coordinated
// omission). Each has an event set of its own (lstack.EventSet), so they
// share an instance with other applications.
//
// ResetStats (a warm-up's end) zeroes every counter of both; requests in
// flight go on and count in the new window. wrk reports the requests
// still in flight (outstanding) and those lost with their connection
// (lost), so that the server's requests and wrk's agree but for the
// requests in flight at the window's edges.
//
// The HTTP code is a deliberately small subset: request line, headers,
// Content-Length bodies, keep-alive. It is real protocol code: what it
// sends, curl and wrk accept.
//
// Both parsers resume: a connection keeps the parse state of the message
// still arriving (how far the header's end was searched for, then what
// the header said), so a message delivered in k pieces costs work linear
// in its size and k, however it is cut. A header (start line to blank
// line) beyond 16 KiB is refused whatever pieces it comes in, a body
// beyond 64 MiB by its Content-Length, both before anything is allocated
// for them.
package http
