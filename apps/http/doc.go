// Package http holds the two programs of the Tengine experiment as event
// loops on a stack instance's lcore: an HTTP/1.1 Server in Tengine's shape
// (one worker per lcore, keep-alive, gzip of responses through the zlib
// shim, a per-request CPU cost for everything else Tengine does, graceful
// reload) and a load generator in wrk's shape (closed loop, or open loop
// at a fixed rate as wrk2 with latencies corrected for coordinated
// omission).
//
// The HTTP code is a deliberately small subset: request line, headers,
// Content-Length bodies, keep-alive. It is real protocol code: what it
// sends, curl and wrk accept.
package http
