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
package http
