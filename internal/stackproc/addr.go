package stackproc

import (
	"encoding/binary"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// Address families of a socket (request SOCKET's argument: AF_INET, or 0
// for it, and AF_INET6).
const (
	fam4 = 4
	fam6 = 6
)

// Which families a bound socket takes (a bit each): an AF_INET socket
// IPv4; an AF_INET6 one bound to [::] both unless IPV6_V6ONLY (Linux's
// net.ipv6.bindv6only = 0 default), to an IPv6 address IPv6, to an
// IPv4-mapped one IPv4 (RFC 3493 section 3.7, Linux's inet6_bind).
const (
	take4 uint8 = 1
	take6 uint8 = 2
)

// famOf is a SOCKET request's family; 0 when the stack cannot make it.
func famOf(arg int32) int {
	switch arg {
	case 0, unix.AF_INET:
		return fam4
	case unix.AF_INET6:
		return fam6
	}
	return 0
}

// reqAddr reads a request's address: the 4 bytes of a sockaddr_in's
// address for an AF_INET socket, the 16 of a sockaddr_in6's for AF_INET6.
func (k *sock) reqAddr(q []byte) netip.Addr {
	if k.fam == fam6 {
		return netip.AddrFrom16([16]byte(q[qAddr : qAddr+16]))
	}
	return netip.AddrFrom4([4]byte(q[qAddr : qAddr+4]))
}

// putAddr writes a response's address (accept's peer) as the socket's
// family holds it: an IPv4 peer of an AF_INET6 socket is IPv4-mapped, as
// Linux's dual-stack listener reports it.
func (k *sock) putAddr(r []byte, a netip.AddrPort) {
	binary.BigEndian.PutUint16(r[pPort:], a.Port())
	if k.fam == fam6 {
		b := a.Addr().As16()
		copy(r[pAddr:pAddr+16], b[:])
		return
	}
	b := a.Addr().Unmap().As4()
	copy(r[pAddr:pAddr+4], b[:])
}

// store16 writes an address into a slot's 16-byte field, word by word
// (each word atomic: the app reads it only after the state that
// publishes it).
func (k *sock) store16(off int, a netip.Addr) {
	b := a.As16()
	if !a.IsValid() {
		b = [16]byte{}
	}
	for i := 0; i < 16; i += 4 {
		k.p.mem.u32(k.off + off + i).Store(binary.LittleEndian.Uint32(b[i:]))
	}
}

func (k *sock) setLocal(a netip.Addr, port uint16) {
	k.store16(sLAddr, a)
	k.p.mem.u32(k.off + sLPort).Store(uint32(port))
}

func (k *sock) setRemote(a netip.Addr, port uint16) {
	k.store16(sRAddr, a)
	k.p.mem.u32(k.off + sRPort).Store(uint32(port))
}

// addrPort is a net.Addr of the stack's as netip (the zero value for
// another kind).
func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	return netip.AddrPort{}
}

// unspecified is the any-address of the socket's family.
func (k *sock) unspecified() netip.Addr {
	if k.fam == fam6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// bindAddr checks a bind's address against the stack and returns the
// families the socket will take (Linux's inet_bind and inet6_bind).
func (k *sock) bindAddr(a netip.Addr, v6only bool) (uint8, unix.Errno) {
	r := k.p.s.r
	v4ok := func(a netip.Addr) (uint8, unix.Errno) {
		if !r.HasIPv4() || (!a.IsUnspecified() && a.As4() != r.Addr()) {
			return 0, unix.EADDRNOTAVAIL
		}
		return take4, 0
	}
	if k.fam == fam4 {
		return v4ok(a)
	}
	if a.Is4In6() {
		if v6only {
			return 0, unix.EINVAL // inet6_bind: a mapped address on a V6ONLY socket
		}
		return v4ok(a.Unmap())
	}
	if a.IsUnspecified() {
		if v6only || !r.HasIPv4() {
			return take6, 0
		}
		return take4 | take6, 0
	}
	if b := a.As16(); b != r.Addr6() && b != r.LinkLocal6() {
		return 0, unix.EADDRNOTAVAIL
	}
	return take6, 0
}

// listenAddress is the network and address the stack's listener for k
// takes (stack/gonet's ListenConfig.Listen).
func (k *sock) listenAddress() (network, address string) {
	ap := func(a netip.Addr) string { return netip.AddrPortFrom(a, k.port).String() }
	switch k.takes {
	case take4:
		return "tcp4", ap(k.addr.Unmap())
	case take6:
		return "tcp6", ap(k.addr)
	}
	return "tcp", ap(netip.IPv6Unspecified())
}

// dialAddr is the address a connect goes to: an IPv4-mapped one is IPv4
// (ENETUNREACH on a V6ONLY socket, as Linux's tcp_v6_connect).
func (k *sock) dialAddr(a netip.Addr, port uint16) (*net.TCPAddr, unix.Errno) {
	if k.fam == fam6 && a.Is4In6() {
		if k.v6only {
			return nil, unix.ENETUNREACH
		}
		a = a.Unmap()
	}
	return net.TCPAddrFromAddrPort(netip.AddrPortFrom(a, port)), 0
}
