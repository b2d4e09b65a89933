package tcp

import "net/netip"

// IP is the network-layer address of a TCP endpoint: an IPv4 or an IPv6
// address. TCP never looks inside it; it compares, hashes and hands it
// back to the network layer (Output, Network), so the state machine is
// the same for both families (RFC 9293 section 3.1 leaves the
// pseudo-header, the only thing TCP sums over the address, to the
// network layer; RFC 8200 section 8.1 gives IPv6's).
//
// It is 17 bytes, comparable and free of pointers, so that the
// connection table's keys (a 4-tuple of two IPs and two ports) are
// hashed and compared as plain memory and the garbage collector never
// scans them. netip.Addr is not used for that: it is 24 bytes and holds a
// pointer (its zone, which TCP has no use for: RFC 4007's zones are the
// network layer's business), and its zero value is not an address, where
// the zero IP is IPv4's unspecified address 0.0.0.0, so that Addr{Port:
// p} stays the IPv4 wildcard it always was.
//
// An IPv4 address sits in the first 4 bytes with the rest zero; v6 tells
// the families apart, so that 2001:db8:: and 32.1.13.184 differ. An
// IPv4-mapped IPv6 address (::ffff:a.b.c.d) is an IPv6 address here, as
// in netip.
type IP struct {
	a  [16]byte
	v6 bool
}

// IPFrom4 returns the IPv4 address b.
func IPFrom4(b [4]byte) IP {
	var ip IP
	copy(ip.a[:4], b[:])
	return ip
}

// IPFrom16 returns the IPv6 address b.
func IPFrom16(b [16]byte) IP { return IP{a: b, v6: true} }

// IPFromNetip returns a's address without its zone; ok is false for the
// zero (invalid) netip.Addr.
func IPFromNetip(a netip.Addr) (ip IP, ok bool) {
	switch {
	case a.Is4():
		return IPFrom4(a.As4()), true
	case a.Is6():
		return IPFrom16(a.As16()), true
	}
	return IP{}, false
}

// Is4 reports whether ip is an IPv4 address.
func (ip IP) Is4() bool { return !ip.v6 }

// Is6 reports whether ip is an IPv6 address (IPv4-mapped ones included).
func (ip IP) Is6() bool { return ip.v6 }

// As4 returns an IPv4 address's 4 bytes; for an IPv6 address it returns
// the zero array (check Is4 first: no IPv6 address has an IPv4 form TCP
// could pick for it).
func (ip IP) As4() [4]byte {
	if ip.v6 {
		return [4]byte{}
	}
	return [4]byte(ip.a[:4])
}

// As16 returns the address in its 16-byte form: an IPv6 address as it
// is, an IPv4 address IPv4-mapped (::ffff:a.b.c.d, RFC 4291 section
// 2.5.5.2), as netip.Addr.As16 does.
func (ip IP) As16() [16]byte {
	if ip.v6 {
		return ip.a
	}
	return netip.AddrFrom4(ip.As4()).As16()
}

// Netip returns the address as a netip.Addr (with no zone).
func (ip IP) Netip() netip.Addr {
	if ip.v6 {
		return netip.AddrFrom16(ip.a)
	}
	return netip.AddrFrom4(ip.As4())
}

// IsUnspecified reports whether ip is its family's wildcard, 0.0.0.0 or
// ::.
func (ip IP) IsUnspecified() bool { return ip.a == [16]byte{} }

// unspecified returns the wildcard address of ip's family.
func (ip IP) unspecified() IP { return IP{v6: ip.v6} }

// Compare orders addresses as netip.Addr.Compare does: IPv4 before IPv6,
// then byte by byte. It returns -1, 0 or +1.
func (ip IP) Compare(o IP) int {
	if ip.v6 != o.v6 {
		if ip.v6 {
			return 1
		}
		return -1
	}
	for i := range ip.a {
		if ip.a[i] != o.a[i] {
			if ip.a[i] < o.a[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// String returns the address in its usual form: dotted decimal for IPv4
// (10.0.0.1), RFC 5952's for IPv6 (fd00::1).
func (ip IP) String() string { return ip.Netip().String() }

// Addr is a TCP endpoint: a network-layer address and a port.
type Addr struct {
	IP   IP
	Port uint16
}

// AddrFrom4 returns the IPv4 endpoint ip:port.
func AddrFrom4(ip [4]byte, port uint16) Addr { return Addr{IP: IPFrom4(ip), Port: port} }

// AddrFromNetip returns ap as an Addr (its zone dropped); ok is false
// when ap's address is not valid.
func AddrFromNetip(ap netip.AddrPort) (a Addr, ok bool) {
	ip, ok := IPFromNetip(ap.Addr())
	return Addr{IP: ip, Port: ap.Port()}, ok
}

// AddrPort returns the endpoint as a netip.AddrPort.
func (a Addr) AddrPort() netip.AddrPort { return netip.AddrPortFrom(a.IP.Netip(), a.Port) }

// String returns the endpoint in its usual form: 10.0.0.1:80 for IPv4,
// [fd00::1]:80 for IPv6 (RFC 5952 section 6).
func (a Addr) String() string { return a.AddrPort().String() }
