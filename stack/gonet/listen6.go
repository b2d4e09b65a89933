package gonet

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// ListenConfig listens by network and address, as net.ListenConfig
// does; the zero value is Listen's backlog and ring sizes.
type ListenConfig struct {
	// Backlog is the accept queue length (DefaultBacklog when 0).
	Backlog int
	// Options size the accepted connections' rings.
	Options Options
}

// Listen listens on address ("host:port") of r's stack with the net
// package's networks:
//
//   - "tcp" with no host (":80") or an unspecified one ("[::]:80") is
//     Listen's dual-stack listener; with an IPv4 literal it listens on
//     that address, with an IPv6 literal on that address (IPv6 only:
//     only the unspecified address takes IPv4 too);
//   - "tcp4" listens on IPv4 only (0.0.0.0, or the literal);
//   - "tcp6" listens on IPv6 only: IPV6_V6ONLY set, as Go's net package
//     sets it for "tcp6" (RFC 3493 section 5.3).
//
// A literal of the other family than the network's fails as the net
// package's does (an *net.AddrError "no suitable address"); a family the
// stack does not have fails with EAFNOSUPPORT, an address that is not the
// stack's with EADDRNOTAVAIL (Linux's bind). The stack has no resolver
// and does not choose a port: host names and port 0 are refused.
func (lc ListenConfig) Listen(r *rt.Runtime, network, address string) (*Listener, error) {
	spec, err := resolveListen(r, network, address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	return listen(r, spec, lc.Backlog, lc.Options)
}

// listenSpec is what a listener binds on every lcore and reports.
type listenSpec struct {
	ip     tcp.IP
	port   uint16
	v6only bool
	addr   *net.TCPAddr
}

// unspecified6 is [::] as TCP's address.
var unspecified6 = tcp.IPFrom16([16]byte{})

// wildcardSpec is Listen's listener: dual-stack on a stack with IPv6.
func wildcardSpec(r *rt.Runtime, port uint16) listenSpec {
	if r.HasIPv6() {
		return listenSpec{ip: unspecified6, port: port, addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: int(port)}}
	}
	return listenSpec{port: port, addr: tcpAddr(tcp.AddrFrom4(r.Addr(), port))}
}

// resolveListen checks network and address against the stack.
func resolveListen(r *rt.Runtime, network, address string) (listenSpec, error) {
	if network != "tcp" && network != "tcp4" && network != "tcp6" {
		return listenSpec{}, net.UnknownNetworkError(network)
	}
	host, ps, err := net.SplitHostPort(address)
	if err != nil {
		return listenSpec{}, err
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil || port == 0 {
		return listenSpec{}, &net.AddrError{Err: "invalid port (the stack does not choose a listening port: give 1..65535)", Addr: address}
	}
	p := uint16(port)
	var ip netip.Addr
	if host != "" {
		if ip, err = netip.ParseAddr(host); err != nil {
			return listenSpec{}, &net.AddrError{Err: "not an IP literal (the stack has no resolver)", Addr: host}
		}
		ip = ip.WithZone("").Unmap()
	}
	if (ip.Is4() && network == "tcp6") || (ip.Is6() && network == "tcp4") {
		return listenSpec{}, &net.AddrError{Err: "no suitable address found", Addr: host}
	}
	wild := !ip.IsValid() || ip.IsUnspecified()
	if network == "tcp" && wild && !ip.Is4() {
		return wildcardSpec(r, p), nil // ":80" and "[::]:80"
	}
	v4 := network == "tcp4" || ip.Is4()
	if (v4 && !r.HasIPv4()) || (!v4 && !r.HasIPv6()) {
		return listenSpec{}, os.NewSyscallError("socket", syscall.EAFNOSUPPORT)
	}
	switch {
	case wild && v4:
		return listenSpec{port: p, addr: &net.TCPAddr{IP: net.IPv4zero.To4(), Port: int(port)}}, nil
	case wild:
		return listenSpec{ip: unspecified6, port: p, v6only: true, addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: int(port)}}, nil
	case !isLocal(r, ip):
		return listenSpec{}, os.NewSyscallError("bind", syscall.EADDRNOTAVAIL)
	}
	tip, _ := tcp.IPFromNetip(ip)
	// An IPv6 address other than [::] takes IPv6 segments only, whatever
	// IPV6_V6ONLY says (but its IPv4-mapped form, which Unmap turned
	// into IPv4 above); "tcp6" sets the option as Go's net package does.
	return listenSpec{ip: tip, port: p, v6only: !v4, addr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, p))}, nil
}

// isLocal reports whether ip is one of the stack's addresses.
func isLocal(r *rt.Runtime, ip netip.Addr) bool {
	switch {
	case ip.Is4():
		return r.HasIPv4() && ip.As4() == r.Addr()
	case r.HasIPv6():
		return ip.As16() == r.Addr6() || ip.As16() == r.LinkLocal6()
	}
	return false
}
