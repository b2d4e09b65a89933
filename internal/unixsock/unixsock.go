// Package unixsock is what Savanna's device and stack processes share to
// serve other local processes on a Unix socket: binding the socket
// (replacing a stale file, refusing a live one), accepting until the
// server closes, and the peer's PID as the kernel records it.
// internal/qatdev (the QAT device process) and internal/stackproc (the
// stack process of preloaded programs) both use it.
package unixsock

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Listen binds a Unix socket at path, unlinked when the listener closes.
// A socket file nothing accepts on (left by a process that died) is
// removed first; one a live process serves is an error that names who
// (for example "a device process").
func Listen(path, who string) (*net.UnixListener, error) {
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.Dial("unix", path); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("listen %s: %s already serves it", path, who)
		}
		_ = os.Remove(path)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// Accept returns the next connection. Once closed reports that the server
// was closed (which closes ln), it returns nil and no error; a timeout is
// retried.
func Accept(ln *net.UnixListener, closed func() bool) (*net.UnixConn, error) {
	for {
		c, err := ln.AcceptUnix()
		if err == nil {
			return c, nil
		}
		if closed() {
			return nil, nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			continue
		}
		return nil, fmt.Errorf("accept: %w", err)
	}
}

// PeerPID is the PID the kernel records for the connection's peer
// (SO_PEERCRED, socket(7)): a process cannot claim another's.
func PeerPID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if serr != nil {
		return 0, fmt.Errorf("SO_PEERCRED: %w", serr)
	}
	return int(cred.Pid), nil
}
