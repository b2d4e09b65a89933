// Package sockring is the app<->stack socket bridge both drivers use: a
// connection's pair of single-producer single-consumer byte rings in
// front of TCP (Gazelle's sock->send_ring and sock->recv_ring), the stack
// thread's service of the connection (send ring into tcp.Conn, TCP into
// the receive ring, EOF, errors, half-close, close with unread bytes as
// an abort), and the application's non-blocking read, write, close and
// shutdown over the rings.
//
// A driver supplies only its policy (Driver): how the stack thread is
// kicked when the application has something for it, how a blocked
// application side is woken, and, for each ring, how the producer's
// writes are handed to the consumer (Handoff). In real time
// (stack/gonet) the hand-off is immediate; in virtual time the rig
// schedules it at the producer's clock, so a consumer on another
// simulated core never sees bytes before the producer wrote them (and
// one whose clock already passed the write sees them at once: Sync), and
// the ring itself carries no time. Calls are the same hand-off for
// requests that carry no bytes (a close, a kick).
//
// The package is named for what it holds, the socket's rings; "bridge"
// is what lstack and gonet each build with it.
package sockring
