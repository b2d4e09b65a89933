// Package ipv4 is the Internet Protocol version 4 (RFC 791): a zero-copy
// view of a datagram (Packet), its parsed header (Repr) with Parse and
// Emit, the header checksum (RFC 1071), a sans-I/O fragment reassembler
// (Reassembler) and the counters of the IP group of the MIB
// (RFC 4293 ipSystemStats, as `netstat -s` prints them).
//
// Choices:
//   - Options are tolerated and skipped: Parse accepts any IHL from 5 to
//     15 and the stack acts on no option (RFC 1122 section 3.2.1.8 lets a
//     host ignore options it does not implement; source routes are not
//     honoured, which RFC 7126 recommends). Emit never writes options.
//   - The checksum is verified unless the caller says hardware already did
//     (DPDK's RTE_MBUF_F_RX_IP_CKSUM_GOOD).
//   - Reassembly follows RFC 791 section 3.2 with the hole descriptors of
//     RFC 815. Any overlap between fragments drops the whole datagram, in
//     the spirit of RFC 5722 (written for IPv6; Linux does the same for
//     IPv4 since 4.19), while an exact duplicate of a fragment already
//     held is ignored. Reassembly is bounded in concurrent datagrams,
//     fragments per datagram, buffered bytes and time (RFC 1122 section
//     3.3.2; default timeout 30 s, Linux's ipfrag_time). When the limits
//     are reached, new fragments are dropped rather than old datagrams
//     evicted, as Linux has done since 4.17. A datagram that times out
//     after its first fragment arrived gets an ICMP Time Exceeded, code 1
//     (RFC 792, RFC 1122 section 3.3.2).
//
// Errors are values of type Error, comparable with ==; converting one to
// error does not allocate.
package ipv4
