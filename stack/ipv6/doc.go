// Package ipv6 is the Internet Protocol version 6 for a host (RFC 8200),
// sans-I/O: addresses (RFC 4291), a zero-copy view of a packet (Packet)
// and its fixed header (Repr) with Parse and Emit, the upper-layer
// pseudo-header sum (section 8.1), input processing of the extension
// header chain with fragment reassembly (Receiver, Reassembler),
// fragmentation on output (Fragments), per-connection flow labels
// (RFC 6437) and a path MTU cache (RFC 8201). The counters are RFC 4293's
// ipSystemStats for IPv6 (Stats), with every drop counted by reason.
//
// Input (Receiver.Input) returns what to do with a packet: deliver its
// upper layer, drop it, or hold it as a fragment; for a drop it names the
// ICMPv6 error RFC 8200 asks for (type, code, pointer), which the caller
// sends or not under RFC 4443 section 2.4 (stack/icmpv6). Choices:
//   - Extension headers are walked in the order they come (section 4).
//     Hop-by-hop options only right after the fixed header, else
//     Parameter Problem code 1 (section 4.1); other headers may repeat,
//     as section 4.1 asks receivers to accept.
//   - Options are processed by the two high-order bits of their type
//     (section 4.2). The host acts on no option: Pad1 and PadN are
//     skipped, Router Alert (RFC 2711) and Tunnel Encapsulation Limit
//     (RFC 2473) are recognised and ignored, anything else, the jumbo
//     payload option included (RFC 2675 is not implemented), is
//     unrecognised. At most 8 non-padding options per header (Linux's
//     net.ipv6.max_{hbh,dst}_opts_number).
//   - Routing headers: with segments left 0 ignored; otherwise Parameter
//     Problem code 0 at the routing type, for every type, since a host
//     processes none (section 4.4; RFC 5095 for type 0).
//   - Fragments (section 4.5): reassembly is keyed by source, destination
//     and identification and bounded in datagrams, fragments, bytes and
//     time (60 s). Any overlap discards the datagram and every later
//     fragment of it (RFC 5722 section 4); exact duplicates are ignored.
//     Atomic fragments are processed in isolation (RFC 6946). A first
//     fragment without the header chain through the upper-layer header
//     is dropped with Parameter Problem code 3 (RFC 7112). A timeout
//     after the first fragment arrived asks for Time Exceeded code 1.
//   - Output never writes atomic fragments (RFC 8021) nor extension
//     headers of its own; fragments carry 8-byte multiples.
//
// Errors are values of type Error, comparable with ==; converting one to
// error does not allocate.
package ipv6
