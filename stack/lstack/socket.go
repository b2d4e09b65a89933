package lstack

import (
	"errors"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// The socket calls of an application running on the instance's lcore
// (Gazelle's IO-multiplexing model: the application's event loop and the
// stack share the core). Each call is charged as the mode says: in
// ModeLstack a call is served on the stack thread through a lock-free
// ring and costs no system call; in ModeKernel it is a system call. The
// copies of the bytes themselves are charged by TCP (Conn.Read and
// Conn.Write), at the mode's price.

// call charges one socket call.
func (in *Instance) call(m hw.Meter) {
	if in.mode == ModeKernel {
		m.Charge(hw.CostSyscall, 1)
		return
	}
	m.Charge(hw.CostStackSocketCall, 1)
	m.Charge(hw.CostRingOp, 2)
}

// Listen opens a listening socket on the instance's address. Every
// instance of a host listens on the port (Gazelle's listen_shadow); RSS
// decides which one a connection reaches.
func (in *Instance) Listen(port uint16, backlog int) (*tcp.Listener, error) {
	return in.tcp.Listen(in.ifc.Addr(), port, backlog)
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
	return in.tcp.Connect(m.Now(), tcp.Addr{IP: in.ifc.Addr(), Port: localPort}, remote)
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

// Wait charges one readiness wait of the application's event loop
// (epoll_wait) that found ready sockets or not. In ModeKernel a thread
// that slept and now has work is woken: a wake-up and a context switch.
func (in *Instance) Wait(m hw.Meter, ready bool) {
	if in.mode == ModeKernel {
		m.Charge(hw.CostSyscall, 1)
		m.Charge(hw.CostEpollWaitKernel, 1)
		if ready && in.slept {
			m.Charge(hw.CostWakeup, 1)
			m.Charge(hw.CostContextSwitch, 1)
		}
		in.slept = !ready
		return
	}
	m.Charge(hw.CostEpollWaitUser, 1)
}
