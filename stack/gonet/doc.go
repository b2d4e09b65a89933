// Package gonet gives Go programs net.Listener and net.Conn over
// Savanna's stack running in real time (stack/rt): the Go form of
// Gazelle's LD_PRELOAD, so an unmodified Go server (net/http, the kv
// server in apps/kv) runs on the user-space stack.
//
// Application goroutines never touch the TCP engine. Each connection has
// two single-producer single-consumer byte rings: Write copies the
// caller's bytes into the send ring and kicks the connection's lcore,
// which moves them into tcp.Conn.Write; the lcore moves what
// tcp.Conn.Read returns into the receive ring and signals the reader.
// Readiness travels back through one-slot channels, so a blocked Read or
// Write costs no CPU. This is Gazelle's split between application threads
// and stack threads (its per-socket send and receive rings, and its
// rpc_msg queue for control calls), with the connection pointer as the
// fd->stack routing entry.
//
// Semantics follow the net package: deadlines time out with an error
// whose Timeout() is true and which matches os.ErrDeadlineExceeded; Read
// returns io.EOF after the peer's FIN; CloseWrite half-closes; Close
// unblocks pending calls with net.ErrClosed; errors are *net.OpError with
// Op "read", "write", "dial", "accept" or "close", Net "tcp" and
// *net.TCPAddr addresses, wrapping *os.SyscallError with the errno the
// kernel would give (ECONNRESET, ECONNREFUSED, ETIMEDOUT, EPIPE).
package gonet
