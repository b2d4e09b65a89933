// Package icmpv6 is the Internet Control Message Protocol for IPv6
// (RFC 4443): message types and a zero-copy view of the common header,
// the checksum over the IPv6 pseudo-header, parsed messages (Repr) with
// Parse and Emit for echo, destination unreachable, packet too big, time
// exceeded and parameter problem, the rules of section 2.4 that decide
// whether an error may be sent and how much of the invoking packet it
// quotes, a token-bucket error rate limiter driven by the caller's clock
// (section 2.4 (f)), an echo responder, and a path MTU cache (RFC 8201).
//
// Neighbor Discovery (RFC 4861) and MLDv2 (RFC 3810) are ICMPv6 messages
// too; their types are named here and their bodies live in stack/ndp.
// The package does no I/O: the caller owns the output path.
package icmpv6
