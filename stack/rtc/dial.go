package rtc

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// dialTries bounds the ephemeral ports tried for one dial when RSS picks
// them (rt.Lcore.LocalPortFor) and one is in use, as gonet does.
const dialTries = 64

// Dial opens a connection from lc to remote, served by h (lcore only:
// call it from a task or a callback on lc). dialed is called once on lc
// with the outcome: nil when the handshake completed, else the engine's
// error (tcp.ErrConnRefused, tcp.ErrTimeout, rt.ErrStopped), after
// which the connection is forgotten and h gets no callback. Bytes may be
// written before the outcome; they go out once the handshake completes.
// The error returned is for a dial that could not start: no source
// address for remote's family, no free port, the connection limit.
//
// With RSS on the port the local port is chosen so that the peer's
// segments land on lc's queue (rt.Lcore.LocalPortFor); use
// rt.Runtime.DialLcore to spread dials over the lcores.
func Dial(lc *rt.Lcore, remote tcp.Addr, h Handler, dialed func(c *Conn, err error)) (*Conn, error) {
	if h == nil || dialed == nil {
		return nil, fmt.Errorf("rtc: dial %v: %w", remote, ErrNilHandler)
	}
	local, err := localFor(lc, remote.IP)
	if err != nil {
		return nil, fmt.Errorf("rtc: dial %v: %w", remote, err)
	}
	var tc *tcp.Conn
	for try := 0; try < dialTries; try++ {
		var p uint16
		if remote.IP.Is6() {
			p = lc.LocalPortFor6(local.As16(), remote)
		} else {
			p = lc.LocalPortFor(local.As4(), remote)
		}
		tc, err = lc.Instance().TCP().Connect(lc.Now(), tcp.Addr{IP: local, Port: p}, remote)
		if p == 0 || !errors.Is(err, tcp.ErrAddrInUse) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rtc: dial %v: %w", remote, err)
	}
	c := newConn(lc, tc, h)
	c.dialed = dialed
	return c, nil
}

// localFor returns the source address for remote (lcore only): the IPv4
// address, or for IPv6 the link-local address to a link-local
// destination and the configured one to any other (RFC 6724's rule 2,
// scope), which must have passed Duplicate Address Detection
// (EADDRNOTAVAIL otherwise, as Linux's connect finds no usable source).
// A family the stack lacks is ENETUNREACH, as Linux's connect without a
// route.
func localFor(lc *rt.Lcore, remote tcp.IP) (tcp.IP, error) {
	ifc := lc.Instance().Iface()
	if remote.Is4() {
		if !ifc.HasIPv4() {
			return tcp.IP{}, syscall.ENETUNREACH
		}
		return tcp.IPFrom4(ifc.Addr()), nil
	}
	if !ifc.HasIPv6() {
		return tcp.IP{}, syscall.ENETUNREACH
	}
	src := ifc.Addr6()
	if remote.Netip().IsLinkLocalUnicast() {
		src = ifc.LinkLocal6()
	}
	if !ifc.IsAssigned6(src) {
		return tcp.IP{}, syscall.EADDRNOTAVAIL
	}
	return tcp.IPFrom16(src), nil
}
