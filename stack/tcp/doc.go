// Package tcp is Savanna's TCP engine: a complete, sans-I/O
// implementation of RFC 9293 with MSS, window scaling, timestamps and
// PAWS (RFC 7323), SACK (RFC 2018) with RFC 6675 loss recovery, RFC 6298
// retransmission timers, fast retransmit and NewReno recovery (RFC 5681,
// RFC 6582), CUBIC (RFC 9438), delayed ACKs, Nagle, keep-alive, zero
// window probing, RFC 5961 RST/SYN/ACK checks, SYN cookies (RFC 4987) and
// RFC 6528 ISNs.
//
// The engine never reads a clock, blocks or starts goroutines. Its
// boundary with the network layer is:
//
//   - (*Stack).Input(now, src, dst, segment) takes a received TCP segment
//     (header and payload, its addresses beside it as IP: IPv4 or
//     IPv6, the engine does not care which);
//   - the Output, which the network layer implements: its Network half
//     gives the header length the MSS is computed from and the
//     pseudo-header sum every checksum is written and verified over (RFC
//     9293 section 3.1), and for every segment the engine emits it lends a
//     buffer to build it in (Lend, then SendLent with the loan's token) or
//     takes a copy (SendSegment) when it lends none;
//   - (*Stack).Poll(now) runs due timers and queued socket work and
//     returns the next deadline.
//
// Sockets (Listener, Conn) are non-blocking and expose readiness through
// (*Stack).Events for an epoll-like layer above. See docs/tcp.md for the
// feature list with RFC references, tunables, counters and known gaps.
//
// The code is split by concern in the manner of gVisor's tcpip/transport/tcp
// and smoltcp's socket/tcp: header.go (wire format), seq.go, stack.go
// (demultiplexing, output, timer heap), conn.go (the TCB, split into
// sender, receiver and timers, and the socket API), end.go (the one path
// by which a connection ends), connect.go (active open, option
// negotiation), accept.go (listeners, SYN queue, cookies), rcv.go (segment
// arrival), snd.go (transmission, SACK recovery), timers.go, rtt.go,
// cc*.go, sack.go, buffer.go, cookie.go, isn.go, stats.go, config.go.
package tcp
