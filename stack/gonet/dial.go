package gonet

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"

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

// Dial connects to address ("10.0.0.1:80" or "[fd00::1]:80": an IP
// literal, the stack has no resolver) from r's stack.
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

// The networks are the net package's: "tcp" takes either family,
// "tcp4" IPv4 literals only and "tcp6" IPv6 ones only (another family's
// literal fails with an *net.AddrError "no suitable address found", as
// the net package's does). An IPv6 destination gets the stack's
// link-local address as its source when it is link-local (fe80::/10; a
// zone, "[fe80::1%sv0]:80", is accepted and ignored: the stack has one
// link), its configured address otherwise (RFC 6724's rule 2, scope).
func (d *Dialer) dial(ctx context.Context, network, address string) (*Conn, error) {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return nil, opError("dial", nil, nil, net.UnknownNetworkError(network))
	}
	raddr, err := parseAddr(address)
	if err != nil {
		return nil, opError("dial", nil, nil, err)
	}
	is4 := raddr.IP.To4() != nil
	if (network == "tcp4" && !is4) || (network == "tcp6" && is4) {
		return nil, opError("dial", nil, raddr, &net.AddrError{Err: "no suitable address found", Addr: raddr.IP.String()})
	}
	return d.dialTCP(ctx, raddr)
}

// DialTCP connects to raddr (an IPv4 or IPv6 address) from r's stack, as
// net.DialTCP does; it skips Dial's parsing of an address string.
func DialTCP(ctx context.Context, r *rt.Runtime, raddr *net.TCPAddr) (*Conn, error) {
	if raddr == nil || raddr.IP.To16() == nil || raddr.Port <= 0 || raddr.Port > 65535 {
		return nil, badDialAddr(raddr)
	}
	ip := raddr.IP.To16()
	if ip4 := raddr.IP.To4(); ip4 != nil {
		ip = ip4
	}
	return (&Dialer{R: r}).dialTCP(ctx, &net.TCPAddr{IP: ip, Port: raddr.Port})
}

//go:noinline
func badDialAddr(raddr *net.TCPAddr) error {
	return opError("dial", nil, raddr, &net.AddrError{Err: "not an IP address and port", Addr: raddr.String()})
}

// dialTCP connects to raddr, which is the caller's to give away.
//
// The frames a dialing goroutine holds while it waits are kept small:
// the parsing of an address, the setting up of the connection and the
// formatting of errors each return before the wait (or run only after
// it). A goroutine starts with a 2 KiB stack and doubles it when a call
// chain outgrows it, and ten thousand goroutines dialling at once pay
// for every byte of the deepest chain.
func (d *Dialer) dialTCP(ctx context.Context, raddr *net.TCPAddr) (*Conn, error) {
	c, res, err := d.startDial(raddr)
	if err != nil {
		return nil, dialErr(nil, raddr, err)
	}
	if err := c.awaitDial(ctx, res); err != nil {
		return nil, dialErr(c, raddr, err)
	}
	return c, nil
}

// startDial makes the connection and asks its lcore to connect it; res
// receives the outcome.
//
//go:noinline
func (d *Dialer) startDial(raddr *net.TCPAddr) (*Conn, chan error, error) {
	remote, lc, err := d.route(raddr)
	if err != nil {
		return nil, nil, err
	}
	c := newConn(lc, d.Options)
	c.ra = remote
	res := make(chan error, 1)
	err = lc.Submit(func(lc *rt.Lcore) {
		tc, err := lc.ConnectTCP(remote)
		if err != nil {
			res <- err
			return
		}
		c.dialRes = res
		c.attach(lc, tc)
		c.service(lc)
	})
	return c, res, err
}

// route returns raddr as TCP's endpoint and the lcore to dial from; a
// family the stack does not have is ENETUNREACH, as Linux's connect
// gives without a route.
func (d *Dialer) route(raddr *net.TCPAddr) (tcp.Addr, *rt.Lcore, error) {
	if ip4 := raddr.IP.To4(); ip4 != nil {
		if !d.R.HasIPv4() {
			return tcp.Addr{}, nil, syscall.ENETUNREACH
		}
		return tcp.AddrFrom4([4]byte(ip4), uint16(raddr.Port)), d.R.DialLcore(), nil
	}
	if !d.R.HasIPv6() {
		return tcp.Addr{}, nil, syscall.ENETUNREACH
	}
	return tcp.Addr{IP: tcp.IPFrom16([16]byte(raddr.IP.To16())), Port: uint16(raddr.Port)}, d.R.DialLcore6(), nil
}

// errDialCanceled marks a dial ended by its context (dialErr reads the
// context's reason).
type errDialCanceled struct{ ctx context.Context }

func (e errDialCanceled) Error() string { return e.ctx.Err().Error() }

// awaitDial waits for the lcore's outcome, the context or the lcore's end.
func (c *Conn) awaitDial(ctx context.Context, res chan error) error {
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return errDialCanceled{ctx}
	case <-c.lc.Done():
		return rt.ErrStopped
	}
}

// dialErr closes c (nil when it was never started) and wraps a dial's
// failure as the net package does.
//
//go:noinline
func dialErr(c *Conn, raddr *net.TCPAddr, err error) error {
	var canceled errDialCanceled
	if errors.As(err, &canceled) {
		_ = c.Close()
		e := canceled.ctx.Err()
		if errors.Is(e, context.DeadlineExceeded) {
			e = os.ErrDeadlineExceeded
		}
		return opError("dial", nil, raddr, e)
	}
	if c != nil {
		c.p.Abandon()
	}
	return opError("dial", nil, raddr, sysErr("connect", err))
}

// parseAddr parses an "ip:port" or "[ip]:port" with an IP literal (an
// IPv6 zone is dropped: the stack has one link).
func parseAddr(address string) (*net.TCPAddr, error) {
	host, ps, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil, &net.AddrError{Err: "not an IP literal (the stack has no resolver)", Addr: host}
	}
	a = a.WithZone("").Unmap()
	ip := net.IP(a.AsSlice())
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 {
		return nil, &net.AddrError{Err: "invalid port", Addr: address}
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
