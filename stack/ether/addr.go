package ether

import (
	"fmt"
	"net"
)

// Addr is a 48-bit IEEE 802 MAC address.
type Addr [6]byte

// BroadcastAddr returns ff:ff:ff:ff:ff:ff. It is a function, not a
// variable, so that the package holds no mutable state.
func BroadcastAddr() Addr { return Addr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} }

// IsBroadcast reports whether a is the broadcast address.
func (a Addr) IsBroadcast() bool { return a == BroadcastAddr() }

// IsMulticast reports whether a is a group address (the I/G bit, the
// least significant bit of the first octet, IEEE 802-2014 clause 8.2);
// broadcast is a multicast address.
func (a Addr) IsMulticast() bool { return a[0]&0x01 != 0 }

// IsUnicast reports whether a is an individual address other than zero.
func (a Addr) IsUnicast() bool { return !a.IsMulticast() && !a.IsZero() }

// IsZero reports whether a is 00:00:00:00:00:00.
func (a Addr) IsZero() bool { return a == Addr{} }

// IsLocal reports whether a is locally administered (the U/L bit).
func (a Addr) IsLocal() bool { return a[0]&0x02 != 0 }

// String formats a as six colon-separated lowercase hex octets.
func (a Addr) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5])
}

// HardwareAddr returns a as a net.HardwareAddr (a copy).
func (a Addr) HardwareAddr() net.HardwareAddr { return append(net.HardwareAddr(nil), a[:]...) }

// ParseAddr parses a MAC address in any form net.ParseMAC accepts, and
// requires it to be 48 bits long.
func ParseAddr(s string) (Addr, error) {
	hw, err := net.ParseMAC(s)
	if err != nil {
		return Addr{}, fmt.Errorf("parse MAC %q: %w", s, err)
	}
	if len(hw) != 6 {
		return Addr{}, fmt.Errorf("parse MAC %q: %d octets, want 6", s, len(hw))
	}
	var a Addr
	copy(a[:], hw)
	return a, nil
}

// AddrFrom returns the first six bytes of hw as an Addr; hw shorter than
// six bytes gives the zero address.
func AddrFrom(hw []byte) Addr {
	var a Addr
	if len(hw) >= 6 {
		copy(a[:], hw)
	}
	return a
}
