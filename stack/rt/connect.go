package rt

import (
	"errors"
	"syscall"

	"github.com/savanna-sim/savanna/stack/tcp"
)

// connectTries bounds the ephemeral ports tried for one active open when
// RSS picks them (LocalPortFor) and the one picked is in use.
const connectTries = 64

// ConnectTCP starts an active open from l to remote (lcore only): the
// source address for remote (SourceFor), a local port whose replies RSS
// steers to l's queue (LocalPortFor, another when the one picked is in
// use), and the engine's SYN. The connection completes or fails later,
// as its events say; the error is for an open that could not start.
// stack/gonet and stack/rtc both dial through it.
func (l *Lcore) ConnectTCP(remote tcp.Addr) (*tcp.Conn, error) {
	local, err := l.SourceFor(remote.IP)
	if err != nil {
		return nil, err
	}
	var tc *tcp.Conn
	for try := 0; try < connectTries; try++ {
		var p uint16
		if remote.IP.Is6() {
			p = l.LocalPortFor6(local.As16(), remote)
		} else {
			p = l.LocalPortFor(local.As4(), remote)
		}
		tc, err = l.Instance().TCP().Connect(l.Now(), tcp.Addr{IP: local, Port: p}, remote)
		if p == 0 || !errors.Is(err, tcp.ErrAddrInUse) {
			break
		}
	}
	return tc, err
}

// SourceFor returns the source address for remote (lcore only): the
// IPv4 address, or for IPv6 the link-local address to a link-local
// destination and the configured one to any other (RFC 6724's rule 2,
// scope), which must have passed Duplicate Address Detection
// (EADDRNOTAVAIL otherwise, as Linux's connect finds no usable source).
// A family the stack lacks is ENETUNREACH, as Linux's connect without a
// route.
func (l *Lcore) SourceFor(remote tcp.IP) (tcp.IP, error) {
	ifc := l.Instance().Iface()
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
