package ipv4

import (
	"fmt"
	"net/netip"
)

// Addresses are [4]byte values in network order, as in the header.

// Broadcast returns the limited broadcast address 255.255.255.255.
func Broadcast() [4]byte { return [4]byte{255, 255, 255, 255} }

// IsMulticast reports a class D address (224.0.0.0/4, RFC 5771).
func IsMulticast(a [4]byte) bool { return a[0]&0xf0 == 0xe0 }

// IsLimitedBroadcast reports 255.255.255.255.
func IsLimitedBroadcast(a [4]byte) bool { return a == Broadcast() }

// IsUnspecified reports 0.0.0.0.
func IsUnspecified(a [4]byte) bool { return a == [4]byte{} }

// IsLoopback reports 127.0.0.0/8 (RFC 1122 section 3.2.1.3 (g): such a
// source or destination must not appear on a wire).
func IsLoopback(a [4]byte) bool { return a[0] == 127 }

// IsReserved reports class E, 240.0.0.0/4 short of the broadcast.
func IsReserved(a [4]byte) bool { return a[0]&0xf0 == 0xf0 && !IsLimitedBroadcast(a) }

// Mask returns the netmask of a prefix length (0..32).
func Mask(bits int) [4]byte {
	var v uint32
	if bits > 0 {
		v = ^uint32(0) << (32 - min(bits, 32))
	}
	return [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// SameSubnet reports whether a and b share the prefix of mask.
func SameSubnet(a, b, mask [4]byte) bool {
	for i := range a {
		if a[i]&mask[i] != b[i]&mask[i] {
			return false
		}
	}
	return true
}

// SubnetBroadcast returns the directed broadcast address of a's subnet.
func SubnetBroadcast(a, mask [4]byte) [4]byte {
	var b [4]byte
	for i := range a {
		b[i] = a[i] | ^mask[i]
	}
	return b
}

// AddrString formats a in dotted decimal.
func AddrString(a [4]byte) string { return netip.AddrFrom4(a).String() }

// ParseAddr parses a dotted-decimal IPv4 address.
func ParseAddr(s string) ([4]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return [4]byte{}, fmt.Errorf("parse IPv4 address %q: not a dotted-decimal IPv4 address", s)
	}
	return a.As4(), nil
}
