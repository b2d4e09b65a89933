package gonet

import (
	"errors"
	"net"
	"os"
	"syscall"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// errnoOf maps the engine's socket errors to the errno Linux returns for
// the same condition, so callers can test errors.Is(err, syscall.ECONNRESET)
// as they do with the net package.
func errnoOf(err error) error {
	switch {
	case errors.Is(err, tcp.ErrConnReset):
		return syscall.ECONNRESET
	case errors.Is(err, tcp.ErrConnRefused):
		return syscall.ECONNREFUSED
	case errors.Is(err, tcp.ErrTimeout):
		return syscall.ETIMEDOUT
	case errors.Is(err, tcp.ErrConnAborted):
		return syscall.ECONNABORTED
	case errors.Is(err, tcp.ErrAddrInUse):
		return syscall.EADDRINUSE
	case errors.Is(err, tcp.ErrNoPorts):
		return syscall.EADDRNOTAVAIL
	case errors.Is(err, tcp.ErrConnLimit):
		return syscall.EMFILE
	case errors.Is(err, rt.ErrStopped):
		return syscall.ENETDOWN
	}
	return err
}

// sysErr wraps an engine error as the net package would: an
// *os.SyscallError naming the call.
func sysErr(call string, err error) error {
	e := errnoOf(err)
	if _, ok := e.(syscall.Errno); ok {
		return os.NewSyscallError(call, e)
	}
	return e
}

// opError builds the *net.OpError the net package returns.
func opError(op string, src, dst net.Addr, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: src, Addr: dst, Err: err}
}

func tcpAddr(a tcp.Addr) *net.TCPAddr {
	return net.TCPAddrFromAddrPort(a.AddrPort())
}
