// Package arp is the Address Resolution Protocol for IPv4 over Ethernet
// (RFC 826): a zero-copy view of the packet (Packet), its parsed form
// (Repr) with Parse and Emit, and a sans-I/O neighbour cache (Cache).
//
// The cache never reads a clock, sleeps or starts goroutines: every call
// takes the current time (time since the start of the run) and output
// goes through a Sink the caller implements (stack/iface does). Poll runs
// the timers (request retransmission, resolution timeout, entry expiry,
// gratuitous announcements) and returns the next deadline.
//
// Behaviour and sources:
//   - Packet handling follows the "packet reception" algorithm of RFC 826,
//     including its merge rule: an entry for the sender is updated if one
//     exists, and created only if the packet is aimed at us.
//   - Requests for our address are answered with a unicast reply
//     (RFC 826; RFC 1122 section 2.3.2.1).
//   - Packets waiting for resolution are queued, bounded per destination
//     and in total, as RFC 1122 section 2.3.2.2 recommends ("SHOULD save
//     at least one (the latest) packet"); lwIP's ARP_QUEUEING does the
//     same. A full queue drops the newest packet, counted.
//   - Requests are retransmitted at most MaxRequests times, one
//     RetransmitInterval apart (RFC 1122 section 2.3.2.1 asks for a rate
//     limit of one request per second per destination); when the last
//     one goes unanswered the queued packets are dropped, counted.
//   - Entries expire after ReachableTime (RFC 1122 section 2.3.2.1,
//     "timeout" mechanism); an entry in use within RefreshBefore of its
//     expiry is re-validated with a unicast request, as lwIP does
//     (ARP_STATE_STABLE_REREQUESTING), so traffic does not stall.
//   - On Start the cache announces our address with gratuitous ARP
//     requests (RFC 5227 section 3, "ARP Announcement"); a packet whose
//     sender address is ours from another MAC is a conflict, counted and
//     never learnt.
package arp
