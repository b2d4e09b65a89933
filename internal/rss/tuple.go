package rss

import "encoding/binary"

// Tuple is the input of the RSS hash for one packet, built without
// allocation: Bytes returns the part in use. The order is the RSS
// specification's (and its verification vectors'): source address,
// destination address, then source port and destination port, all in
// network byte order.
type Tuple struct {
	buf [MaxInput]byte
	n   int
}

// Set makes t the input for addresses src and dst (4 bytes each for
// IPv4, 16 for IPv6; longer slices are cut to MaxInput in all) and, when
// ports is true, the ports sport and dport after them.
func (t *Tuple) Set(src, dst []byte, ports bool, sport, dport uint16) {
	n := copy(t.buf[:], src)
	n += copy(t.buf[n:], dst)
	if ports && n+4 <= len(t.buf) {
		binary.BigEndian.PutUint16(t.buf[n:], sport)
		binary.BigEndian.PutUint16(t.buf[n+2:], dport)
		n += 4
	}
	t.n = n
}

// Reset empties t.
func (t *Tuple) Reset() { t.n = 0 }

// Bytes returns the hash input.
func (t *Tuple) Bytes() []byte { return t.buf[:t.n] }

// IPv4Input returns the 12-byte input of a TCP or UDP over IPv4 flow:
// src, dst, sport, dport.
func IPv4Input(src, dst [4]byte, sport, dport uint16) [12]byte {
	var in [12]byte
	copy(in[0:4], src[:])
	copy(in[4:8], dst[:])
	binary.BigEndian.PutUint16(in[8:], sport)
	binary.BigEndian.PutUint16(in[10:], dport)
	return in
}

// HashIPv4 returns the Toeplitz hash under key of the TCP or UDP over
// IPv4 flow from src:sport to dst:dport (the RSSIPv4TCP/RSSIPv4UDP hash
// types).
func HashIPv4(key []byte, src, dst [4]byte, sport, dport uint16) uint32 {
	in := IPv4Input(src, dst, sport, dport)
	return Toeplitz(key, in[:])
}

// HashIPv4Addrs returns the Toeplitz hash under key of the addresses
// alone (the RSSIPv4 hash type: fragments and other protocols).
func HashIPv4Addrs(key []byte, src, dst [4]byte) uint32 {
	var in [8]byte
	copy(in[0:4], src[:])
	copy(in[4:8], dst[:])
	return Toeplitz(key, in[:])
}

// IPv6Input returns the 36-byte input of a TCP or UDP over IPv6 flow
// (the RSSIPv6TCP/RSSIPv6UDP hash types of Microsoft's RSS
// specification, without extension-header addresses): src, dst, sport,
// dport.
func IPv6Input(src, dst [16]byte, sport, dport uint16) [36]byte {
	var in [36]byte
	copy(in[0:16], src[:])
	copy(in[16:32], dst[:])
	binary.BigEndian.PutUint16(in[32:], sport)
	binary.BigEndian.PutUint16(in[34:], dport)
	return in
}

// HashIPv6 returns the Toeplitz hash under key of the TCP or UDP over
// IPv6 flow from src:sport to dst:dport.
func HashIPv6(key []byte, src, dst [16]byte, sport, dport uint16) uint32 {
	in := IPv6Input(src, dst, sport, dport)
	return Toeplitz(key, in[:])
}

// HashIPv6Addrs returns the Toeplitz hash under key of the IPv6
// addresses alone (the RSSIPv6 hash type).
func HashIPv6Addrs(key []byte, src, dst [16]byte) uint32 {
	in := IPv6Input(src, dst, 0, 0)
	return Toeplitz(key, in[:32])
}

// PortForQueue finds a local port for a connection to remote whose
// replies the NIC's RSS steers to queue: the hash input of a reply is its
// source (remoteIP, remotePort) then its destination (local, port). It
// tries ports from *next on, wrapping within [lo, hi], advances *next past
// the port it returns, and returns 0 when no port of the range fits. A
// user-space stack opening connections uses it to keep each connection on
// the instance that owns the queue.
func PortForQueue(t *Table, reta []uint16, queue int, remoteIP, local [4]byte, remotePort uint16, next *uint16, lo, hi uint16) uint16 {
	return portForQueue(reta, queue, next, lo, hi, func(p uint16) uint32 {
		in := IPv4Input(remoteIP, local, remotePort, p)
		return t.Hash(in[:])
	})
}

// PortForQueue6 is PortForQueue for a connection over IPv6: the reply's
// hash input is the 36-byte IPv6 4-tuple (IPv6Input).
func PortForQueue6(t *Table, reta []uint16, queue int, remoteIP, local [16]byte, remotePort uint16, next *uint16, lo, hi uint16) uint16 {
	return portForQueue(reta, queue, next, lo, hi, func(p uint16) uint32 {
		in := IPv6Input(remoteIP, local, remotePort, p)
		return t.Hash(in[:])
	})
}

// portForQueue is PortForQueue's search with the family's hash of a
// candidate port.
func portForQueue(reta []uint16, queue int, next *uint16, lo, hi uint16, hash func(uint16) uint32) uint16 {
	for i := 0; i <= int(hi)-int(lo); i++ {
		p := *next
		if p < lo || p > hi {
			p = lo
		}
		if p == hi {
			*next = lo
		} else {
			*next = p + 1
		}
		if int(RETAQueue(reta, hash(p))) == queue {
			return p
		}
	}
	return 0
}
