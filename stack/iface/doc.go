// Package iface is one stack instance's network layer bound to one NIC
// queue pair: Ethernet demultiplexing, ARP, IPv4 input and output with
// reassembly and fragmentation, ICMP (echo, errors, rate limit) and UDP
// sockets, with a hook through which TCP (stack/tcp) receives segments
// and sends them. It is lwIP's netif plus its ip4/icmp/udp layers, in
// Gazelle's per-core shape: one Interface per lcore, owning one rx/tx
// queue pair; nothing in it is safe for concurrent use.
//
// # Sans-I/O
//
// The Interface reads no clock, sleeps never and starts no goroutines. The
// runtime (the lstack poll loop) drives it:
//
//	n := port.RxBurst(q, pkts)
//	for _, m := range pkts[:n] { ifc.Input(now, m) }
//	next := ifc.Poll(now)   // ARP retries and expiry, reassembly timeouts
//
// and implements Link, through which frames leave: Alloc takes an mbuf
// from the lcore's pool, Transmit queues one frame (the runtime batches
// them into TxBurst). Input owns the mbuf it is given: it frees it, or
// hands it to a UDP socket's receive queue (zero-copy), or lends it to
// the TCP handler for the duration of the call.
//
// # TCP hook
//
// TCP registers a TransportHandler for protocol 6 with RegisterTransport.
// Each segment for this host arrives in HandleSegment with its addresses
// and its bytes, the transport checksum already verified (by the NIC's
// RxL4ChecksumGood flag or in software). ICMP errors that quote a TCP
// segment reach the handler too if it also implements ErrorHandler
// (fragmentation needed with the next-hop MTU, for path MTU discovery,
// RFC 1191).
//
// To send, the zero-copy way:
//
//	m := ifc.AllocTransport()          // headroom for Ethernet + IPv4 reserved
//	seg, _ := m.Append(hdrLen + len(data))
//	... write the TCP header (checksum field zero) and data into seg ...
//	err := ifc.OutputIPv4(now, m, dst, ipv4.ProtoTCP, iface.OutputOptions{Checksum: iface.ChecksumTCP, DontFrag: true})
//
// OutputIPv4 prepends the IPv4 and Ethernet headers in the headroom, fills
// the TCP checksum (or leaves it to the NIC when the link offloads it),
// resolves the next hop with ARP (queueing the frame while it resolves)
// and transmits. It always takes ownership of m. A TCP that computes its
// own checksum uses checksum.PseudoHeaderV4(src, dst, 6, len(seg)) plus
// checksum.Add over the segment, and passes ChecksumNone. The transport
// checksums the interface fills or verifies go through their owners'
// wire API (tcp.SetChecksum, tcp.VerifyChecksum, udp.Packet), never
// through offsets of its own.
//
// stack/tcp's engine plugs in with NewSegmentSender, whose
// *SegmentSender is tcp.Output over IPv4 addresses (stack/lstack adapts
// tcp.IP at its edge): the IPv4 header length and
// pseudo-header sum the engine's MSS and checksums are made of, buffer
// lending (Lend lends an mbuf's tailroom under a token, SendLent sends it
// in place, and misuse is refused with ErrLoanEnded) and SendSegment by
// copy. HandlerFunc adapts a function for receive:
//
//	ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(now time.Duration, s iface.Segment) {
//		tcpStack.InputVerified(now, s.Src, s.Dst, s.Payload)
//	}))
//	out := iface.NewSegmentSender(ifc, ipv4.ProtoTCP,
//		iface.OutputOptions{DontFrag: true, Checksum: iface.ChecksumTCP})
//
// MSS gives the MSS the MTU allows behind the IPv4 and TCP headers.
//
// # Counters
//
// Every frame that enters is counted once at the layer that consumes or
// drops it, by reason (Stats): nothing is dropped silently, and a
// malformed frame at any layer is counted and dropped, never a panic.
//
// # Restrictions
//
// Input handles single-segment mbufs; chained ones are dropped (counted as
// eth.rx_chained): with a 1500-byte MTU and 2 KiB mbufs the NIC never
// chains. OutputIPv4 likewise takes single-segment mbufs. Frames with an
// 802.1Q tag are dropped (eth.rx_vlan): the NIC is expected to strip tags.
// Sending to our own address is not looped back (it counts as no route).
// Multicast is not joined: frames to group MAC addresses other than
// broadcast are dropped (eth.rx_multicast).
package iface
