package lstack

import (
	"errors"
	"io"
	"slices"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// The socket calls of an application running on the instance's lcore
// (Gazelle's IO-multiplexing model: the application's event loop and the
// stack share the core); it waits for readiness on an EventSet of its
// own (eventset.go). Each call is charged as lstack serves it: on the
// stack thread through a lock-free ring, no system call; the copies of
// the bytes themselves are charged by TCP (Conn.Read and Conn.Write) on
// the stack's meter. A binding that prices another way of reaching the
// same engines decorates the application's meter (SetAppMeter).

// call charges one socket call on the application's meter m: the call
// served by the stack and its request and reply on the ring.
func (in *Instance) call(m hw.Meter) {
	m = in.app(m)
	m.Charge(CostSocketCall, 1)
	m.Charge(CostRingOp, 2)
}

// Listen opens a listening socket on the instance's address. Every
// instance of a host listens on the port (Gazelle's listen_shadow); RSS
// decides which one a connection reaches.
func (in *Instance) Listen(port uint16, backlog int) (*tcp.Listener, error) {
	if !in.ifc.HasIPv4() {
		// An IPv6-only instance listens on its IPv6 address.
		return in.tcp.Listen(tcp.IPFrom16(in.ifc.Addr6()), port, backlog)
	}
	return in.tcp.Listen(tcp.IPFrom4(in.ifc.Addr()), port, backlog)
}

// Accept takes a connection from the listener's accept queue.
func (in *Instance) Accept(m hw.Meter, l *tcp.Listener) (*tcp.Conn, bool) {
	in.call(m)
	return l.Accept()
}

// Connect opens a connection from local (the instance's address and a
// port; 0 picks one) to remote.
func (in *Instance) Connect(m hw.Meter, localPort uint16, remote tcp.Addr) (*tcp.Conn, error) {
	in.call(m)
	if remote.IP.Is6() {
		return in.tcp.Connect(m.Now(), tcp.Addr{IP: tcp.IPFrom16(in.ifc.Addr6()), Port: localPort}, remote)
	}
	return in.tcp.Connect(m.Now(), tcp.AddrFrom4(in.ifc.Addr(), localPort), remote)
}

// Read reads from a connection. Nothing to read yet is (0, nil), as a
// non-blocking read's EAGAIN; the end of the stream is io.EOF.
func (in *Instance) Read(m hw.Meter, c *tcp.Conn, p []byte) (int, error) {
	in.call(m)
	n, err := c.Read(p)
	if errors.Is(err, tcp.ErrWouldBlock) {
		return n, nil
	}
	return n, err
}

// Write writes to a connection. A full send buffer is (0, nil), as a
// non-blocking write's EAGAIN: wait for tcp.EventWritable.
func (in *Instance) Write(m hw.Meter, c *tcp.Conn, p []byte) (int, error) {
	in.call(m)
	n, err := c.Write(p)
	if errors.Is(err, tcp.ErrWouldBlock) {
		return n, nil
	}
	return n, err
}

// Close closes a connection.
func (in *Instance) Close(m hw.Meter, c *tcp.Conn) error {
	in.call(m)
	return c.Close()
}

// wait charges one readiness wait (epoll_wait) of an application's event
// loop that found ready sockets or not, and the events it returned
// (events, one epoll_event_user each). When the mode's threads sleep, a
// thread that slept and now has work is woken: the scheduler's wake-up
// and a context switch; slept records whether the thread went to sleep.
func (in *Instance) wait(m hw.Meter, ready bool, events int64, slept *bool) {
	m = in.app(m)
	m.Charge(CostEpollWait, 1)
	if events > 0 {
		m.Charge(CostEpollEvent, events)
	}
	if !in.mode.Sleeps() {
		return
	}
	if ready && *slept {
		// The thread shares the instance's core, where the work that
		// wakes it runs: a same-core wake-up, no IPI.
		m.Charge(hw.CostWakeupSameCore, 1)
		m.Charge(hw.CostContextSwitch, 1)
	}
	*slept = !ready
}

// readChunk is the least free room ReadAvailable gives each Read.
const readChunk = 16 << 10

// ReadAvailable appends to dst everything the connection holds now,
// reading straight into dst's spare capacity (grown as needed, so no
// bounce buffer and no second copy). Readiness is edge-triggered, so it
// reads until the stack has nothing more: a FIN that arrives with the
// last data is seen now, not at the next event. eof reports the end of
// the stream; err is any other failure.
func (in *Instance) ReadAvailable(m hw.Meter, c *tcp.Conn, dst []byte) (_ []byte, eof bool, err error) {
	for {
		if cap(dst)-len(dst) < readChunk {
			dst = slices.Grow(dst, readChunk)
		}
		n, err := in.Read(m, c, dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		switch {
		case errors.Is(err, io.EOF):
			return dst, true, nil
		case err != nil:
			return dst, false, err
		case n == 0:
			return dst, false, nil
		}
	}
}

// WriteAvailable writes as much of p as the send buffer takes and returns
// what is left (empty when all was taken; otherwise wait for
// tcp.EventWritable and call again with the rest).
func (in *Instance) WriteAvailable(m hw.Meter, c *tcp.Conn, p []byte) ([]byte, error) {
	for len(p) > 0 {
		n, err := in.Write(m, c, p)
		if err != nil {
			return p, err
		}
		p = p[n:]
		if n == 0 {
			break
		}
	}
	return p, nil
}
