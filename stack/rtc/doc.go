// Package rtc runs applications to completion on the lcores of Savanna's
// real-time stack (stack/rt): an application's code is called on the
// lcore that owns its connections, between two polls of the stack, and
// reads and writes tcp.Conn there directly. No byte ring sits between
// the application and TCP, and no goroutine hands anything to another:
// the lcore polls the port, TCP raises readiness, and the lcore calls
// the application, which answers in the same turn; what it writes goes
// out in the next poll.
//
// This is the model of DPDK applications that run one lcore per
// connection set (the application is the poll loop), and of Gazelle's
// run-to-completion mode, in which the application thread polls the
// stack instead of handing its calls to a stack thread. stack/gonet is
// the other model, Gazelle's default: application goroutines behind
// net.Conn, a pair of byte rings per connection and a hand-off to the
// lcore for every call. rtc costs the application the net.Conn API (no
// blocking call, no deadline: an application that blocks in a callback
// stops the stack) and buys a round trip with no hand-off and a byte
// with fewer copies:
//
//   - sending, one copy from the application's buffer into TCP's send
//     buffer (Conn.Write), then TCP's own into the frame;
//   - receiving, one copy from the frame into the application's buffer:
//     a handler that implements Receiver takes in-order bytes straight
//     from the arriving segment (tcp.Conn.SetDirectReceiver), so that
//     TCP's receive buffer is skipped; bytes it does not take, and every
//     byte of a handler without Receive, wait in TCP's receive buffer
//     for Conn.Read (one copy out of it).
//
// Where it sits: apps → stack/rtc → stack/rt and stack/tcp; like gonet
// it is a socket layer over stack/rt, so it is a package of its own
// rather than part of the driver, which knows nothing of sockets but the
// rt.ConnHandler and rt.ListenerHandler it calls.
//
// Threading: everything here runs on the lcore that owns the connection
// (Dial, the handlers' callbacks, every Conn method), except Listen and
// Listener.Close, which an ordinary goroutine calls and which wait for
// every lcore; an application starts its work on an lcore with
// rt.Lcore.Submit.
package rtc
