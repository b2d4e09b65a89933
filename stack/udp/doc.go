// Package udp is the User Datagram Protocol (RFC 768) over IPv4: a
// zero-copy view of a datagram (Packet) and its parsed header (Repr) with
// Parse and Emit, including the checksum over the IPv4 pseudo-header.
//
// A zero checksum field means the sender computed none, which IPv4 allows
// (RFC 768; RFC 1122 section 4.1.3.4): such datagrams are accepted. A
// computed checksum of zero is sent as 0xffff. Sockets (bind, send to,
// receive from, port unreachable) live in stack/iface, which owns the
// output path.
package udp
