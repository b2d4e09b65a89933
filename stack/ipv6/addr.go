package ipv6

import (
	"fmt"
	"net/netip"
)

// Addr is an IPv6 address (RFC 4291), 16 bytes in network order. It is a
// plain array so that it is comparable, hashable and free of pointers;
// netip.Addr converts both ways for parsing and printing.
type Addr [16]byte

// AddrLen is the length of an address in bytes.
const AddrLen = 16

// ParseAddr parses an IPv6 address in RFC 4291 section 2.2 text form. An
// IPv4 address or a zone is refused: the network layer has no zones.
func ParseAddr(s string) (Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return Addr{}, fmt.Errorf("ipv6: %w", err)
	}
	if !a.Is6() {
		return Addr{}, fmt.Errorf("ipv6: %q is not an IPv6 address", s)
	}
	if a.Zone() != "" {
		return Addr{}, fmt.Errorf("ipv6: %q has a zone", s)
	}
	return Addr(a.As16()), nil
}

// Netip returns a as a netip.Addr.
func (a Addr) Netip() netip.Addr { return netip.AddrFrom16(a) }

// String returns a in RFC 5952's canonical text form.
func (a Addr) String() string { return a.Netip().String() }

// IsUnspecified reports whether a is :: (RFC 4291 section 2.5.2).
func (a Addr) IsUnspecified() bool { return a == Addr{} }

// IsLoopback reports whether a is ::1 (RFC 4291 section 2.5.3).
func (a Addr) IsLoopback() bool { return a == Addr{15: 1} }

// IsMulticast reports whether a is in ff00::/8 (RFC 4291 section 2.7).
func (a Addr) IsMulticast() bool { return a[0] == 0xff }

// IsLinkLocal reports whether a is a link-local unicast address,
// fe80::/10 (RFC 4291 section 2.5.6).
func (a Addr) IsLinkLocal() bool { return a[0] == 0xfe && a[1]&0xc0 == 0x80 }

// SolicitedNode returns the solicited-node multicast address of a,
// ff02::1:ffXX:XXXX with a's low 24 bits (RFC 4291 section 2.7.1).
func (a Addr) SolicitedNode() Addr {
	return Addr{0: 0xff, 1: 0x02, 11: 0x01, 12: 0xff, 13: a[13], 14: a[14], 15: a[15]}
}

// Well-known multicast groups (RFC 4291 section 2.7.1, RFC 3810 section
// 5.2.14). Functions, not variables, so that the package holds no
// mutable state.

// AllNodes returns ff02::1, every node on the link.
func AllNodes() Addr { return Addr{0: 0xff, 1: 0x02, 15: 0x01} }

// AllRouters returns ff02::2, every router on the link.
func AllRouters() Addr { return Addr{0: 0xff, 1: 0x02, 15: 0x02} }

// AllMLDv2Routers returns ff02::16, where MLDv2 reports go.
func AllMLDv2Routers() Addr { return Addr{0: 0xff, 1: 0x02, 15: 0x16} }

// MulticastMAC returns the Ethernet group address that carries the IPv6
// multicast group a: 33:33 and a's low 32 bits (RFC 2464 section 7).
func (a Addr) MulticastMAC() [6]byte {
	return [6]byte{0x33, 0x33, a[12], a[13], a[14], a[15]}
}

// LinkLocalFromMAC returns the link-local address whose interface
// identifier is the modified EUI-64 of mac (RFC 4291 appendix A, RFC 4862
// section 5.3).
func LinkLocalFromMAC(mac [6]byte) Addr {
	var p Addr
	p[0], p[1] = 0xfe, 0x80
	return p.WithInterfaceID(InterfaceIDFromMAC(mac))
}

// InterfaceIDFromMAC returns the modified EUI-64 interface identifier of
// mac: ff:fe inserted in the middle and the universal/local bit inverted
// (RFC 4291 appendix A).
func InterfaceIDFromMAC(mac [6]byte) [8]byte {
	return [8]byte{mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]}
}

// WithInterfaceID returns a's first 64 bits followed by id (a /64 prefix
// and an interface identifier, RFC 4291 section 2.5.1).
func (a Addr) WithInterfaceID(id [8]byte) Addr {
	copy(a[8:], id[:])
	return a
}
