// Package icmp is the Internet Control Message Protocol for IPv4 (RFC 792):
// a zero-copy view of a message (Packet), its parsed form (Repr) with Parse
// and Emit, builders for the error messages the stack sends on behalf of
// IP, UDP and TCP, the rules that forbid an error (RFC 1122 section
// 3.2.2), a token-bucket rate limiter driven by the caller's clock, and the
// ICMP counters of RFC 4293 (icmpStatsTable / `netstat -s` Icmp:).
//
// The engine that answers echo requests and sends errors lives in
// stack/iface, which owns the output path; this package is pure.
//
// Message types handled: echo request and reply (RFC 792), destination
// unreachable with its codes, including fragmentation needed with the
// next-hop MTU (RFC 1191 section 4), time exceeded (TTL and reassembly),
// parameter problem. Errors quote the offending IP header and the first 8
// bytes of its payload (RFC 792; RFC 1122 section 3.2.2 allows more, and
// this stack quotes exactly that much so that an error fits any MTU).
package icmp
