package gonet

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Dialer opens connections from a runtime's stack. Its DialContext has
// the signature of net.Dialer's, so it plugs into http.Transport.
type Dialer struct {
	// R is the stack.
	R *rt.Runtime
	// Options size the connections' rings.
	Options Options
}

// Dial connects to address ("10.0.0.1:80", an IPv4 literal: the stack has
// no resolver) from r's stack.
func Dial(ctx context.Context, r *rt.Runtime, address string) (*Conn, error) {
	return (&Dialer{R: r}).dial(ctx, "tcp", address)
}

// DialContext implements the net.Dialer-shaped dial function.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (d *Dialer) dial(ctx context.Context, network, address string) (*Conn, error) {
	if network != "tcp" && network != "tcp4" {
		return nil, opError("dial", nil, nil, net.UnknownNetworkError(network))
	}
	raddr, err := parseAddr(address)
	if err != nil {
		return nil, opError("dial", nil, nil, err)
	}
	remote := tcp.Addr{Port: uint16(raddr.Port)}
	copy(remote.IP[:], raddr.IP.To4())
	lc := d.R.DialLcore()
	c := newConn(lc, d.Options)
	c.raddr = raddr
	res := make(chan error, 1)
	err = lc.Submit(func(lc *rt.Lcore) {
		local := lc.Instance().Iface().Addr()
		var tc *tcp.Conn
		var err error
		for try := 0; try < 64; try++ {
			p := lc.LocalPortFor(local, remote)
			tc, err = lc.Instance().TCP().Connect(lc.Now(), tcp.Addr{IP: local, Port: p}, remote)
			if p == 0 || !errors.Is(err, tcp.ErrAddrInUse) {
				break
			}
		}
		if err != nil {
			res <- err
			return
		}
		c.dialRes = res
		c.attach(lc, tc)
		c.service(lc)
	})
	if err != nil {
		return nil, opError("dial", nil, raddr, sysErr("connect", err))
	}
	select {
	case err = <-res:
	case <-ctx.Done():
		_ = c.Close()
		e := ctx.Err()
		if errors.Is(e, context.DeadlineExceeded) {
			e = os.ErrDeadlineExceeded
		}
		return nil, opError("dial", nil, raddr, e)
	case <-lc.Done():
		err = rt.ErrStopped
	}
	if err != nil {
		c.closed.Store(true)
		return nil, opError("dial", nil, raddr, sysErr("connect", err))
	}
	return c, nil
}

// parseAddr parses an "ip:port" with an IPv4 literal.
func parseAddr(address string) (*net.TCPAddr, error) {
	host, ps, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host).To4()
	if ip == nil {
		return nil, &net.AddrError{Err: "not an IPv4 literal (the stack has no resolver)", Addr: host}
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 {
		return nil, &net.AddrError{Err: "invalid port", Addr: address}
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
