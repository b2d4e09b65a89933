package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// Link is how frames leave the interface; the runtime implements it over
// the lcore's mempool and tx queue.
type Link interface {
	// Alloc returns a reset mbuf with the pool's default headroom, or nil
	// when the pool is empty.
	Alloc() *hw.Mbuf
	// Transmit hands one complete frame to the tx queue; the link owns m
	// from then on (it frees what the NIC refuses, counting it).
	Transmit(m *hw.Mbuf)
	// TxOffloads returns the transmit offloads enabled on the port
	// (checksums the NIC computes when the mbuf asks).
	TxOffloads() hw.TxOffloads
}

// Segment is one transport segment delivered to a TransportHandler.
type Segment struct {
	// Src and Dst are the IPv4 addresses (Dst is ours, or a broadcast).
	Src, Dst [4]byte
	// Protocol is the IP protocol number.
	Protocol ipv4.Protocol
	// TOS is the IP type-of-service octet (DSCP and ECN bits, RFC 3168).
	TOS uint8
	// TTL is the received time-to-live.
	TTL uint8
	// Broadcast says the datagram was sent to a broadcast address (IP or
	// link layer); TCP must drop such segments (RFC 9293 section 3.10.7).
	Broadcast bool
	// IP is the whole datagram (header, then Payload), for quoting in an
	// ICMP error. Valid only during the call.
	IP ipv4.Packet
	// Payload is the transport segment: header and data, trimmed to the
	// IP length. Its checksum has been verified (for TCP and UDP). Valid
	// only during the call unless Mbuf is kept.
	Payload []byte
	// Mbuf holds Payload, or is nil when the datagram was reassembled
	// from fragments. A handler that wants to keep the bytes without
	// copying calls Mbuf.RefInc before returning and Mbuf.Free when done;
	// the interface drops its own reference after the call.
	Mbuf *hw.Mbuf
}

// TransportHandler receives the segments of one IP protocol (TCP
// registers one for protocol 6).
type TransportHandler interface {
	HandleSegment(now time.Duration, seg Segment)
}

// ICMPError is an ICMP error message about a datagram we sent.
type ICMPError struct {
	// From is the host or router that sent the error.
	From [4]byte
	// Type and Code of the message (icmp.TypeDestUnreach ...).
	Type, Code uint8
	// MTU is the next-hop MTU of "fragmentation needed" (RFC 1191), zero
	// otherwise or from an old router.
	MTU uint16
	// Quoted is the IPv4 header of our datagram followed by at least 8
	// bytes of its payload (the ports, and TCP's sequence number).
	// Valid only during the call.
	Quoted ipv4.Packet
}

// ErrorHandler is implemented by a TransportHandler that wants the ICMP
// errors quoting its segments (RFC 1122 section 4.2.3.9 for TCP).
type ErrorHandler interface {
	HandleICMPError(now time.Duration, e ICMPError)
}

// EchoHandler receives echo replies (for ping).
type EchoHandler func(now time.Duration, from [4]byte, ident, seq uint16, data []byte)

// Checksum says who fills the transport checksum on output.
type Checksum uint8

// Transport checksum modes for OutputIPv4.
const (
	// ChecksumNone: the caller filled the checksum (or the protocol has
	// none).
	ChecksumNone Checksum = iota
	// ChecksumTCP: the interface fills the TCP checksum (offset 16),
	// in software or through the NIC's TCP checksum offload.
	ChecksumTCP
	// ChecksumUDP: the interface fills the UDP checksum (offset 6).
	ChecksumUDP
)

// OutputOptions are per-datagram IP output settings.
type OutputOptions struct {
	// TOS is the type-of-service octet.
	TOS uint8
	// TTL overrides the interface's TTL when non-zero.
	TTL uint8
	// DontFrag sets DF: a datagram larger than the MTU fails with
	// ErrMessageTooLong instead of being fragmented (TCP always sets it,
	// RFC 1191).
	DontFrag bool
	// Checksum says whether the interface fills the transport checksum.
	Checksum Checksum
}

// HandlerFunc adapts a function to TransportHandler, e.g. for stack/tcp:
//
//	ifc.RegisterTransport(ipv4.ProtoTCP, iface.HandlerFunc(func(now time.Duration, s iface.Segment) {
//		tcpStack.InputVerified(now, s.Src, s.Dst, s.Payload) // checksum already verified
//	}))
type HandlerFunc func(now time.Duration, seg Segment)

// HandleSegment calls f.
func (f HandlerFunc) HandleSegment(now time.Duration, seg Segment) { f(now, seg) }

// SegmentSender adapts the interface to a transport engine that hands
// over each segment by copy, as stack/tcp's Output does
// (SendSegment(now, src, dst, seg)): one copy into an mbuf, then
// OutputIPv4. Options apply to every segment; with Options.Checksum set
// the interface (re)computes the transport checksum, in software or
// through the NIC's offload, so the engine may leave only the
// pseudo-header sum in it.
type SegmentSender struct {
	Ifc      *Interface
	Protocol ipv4.Protocol
	Options  OutputOptions
}

// SegmentBuffer lends the transport the tailroom of a fresh mbuf (with
// room for the IP and Ethernet headers in front) to build a segment of up
// to n bytes in, so that SendSegment sends it without a copy: the
// zero-copy path of Gazelle's lwIP, where a segment is written once,
// straight into the buffer the NIC sends. It returns nil when no mbuf or
// not enough room can be had; the transport then builds the segment
// elsewhere and SendSegment copies it.
func (s SegmentSender) SegmentBuffer(n int) []byte {
	i := s.Ifc
	if i.lent == nil {
		if i.lent = i.AllocTransport(); i.lent == nil {
			return nil
		}
	}
	if i.lent.Tailroom() < n {
		return nil
	}
	start := i.lent.DataOff + i.lent.DataLen
	return i.lent.Buf[start : start+n : start+n]
}

// SendSegment sends seg from our address to dst: in place when seg was
// built in the buffer SegmentBuffer lent, otherwise copied into an mbuf.
// src must be our address.
func (s SegmentSender) SendSegment(now time.Duration, src, dst [4]byte, seg []byte) error {
	i := s.Ifc
	if src != i.ip {
		i.stats.IP.OutRequests++
		i.stats.IP.OutDiscards++
		i.stats.Tx.BadAddress++
		return ErrBadAddress
	}
	if m := i.lent; m != nil && len(seg) > 0 && len(seg) <= m.Tailroom() &&
		&seg[0] == &m.Buf[m.DataOff+m.DataLen] {
		i.lent = nil
		if _, err := m.Append(len(seg)); err != nil {
			m.Free()
			return err
		}
		return i.OutputIPv4(now, m, dst, s.Protocol, s.Options)
	}
	m := i.AllocTransport()
	if m == nil {
		i.stats.IP.OutRequests++
		i.stats.IP.OutDiscards++
		return ErrNoMbuf
	}
	b, err := m.Append(len(seg))
	if err != nil {
		m.Free()
		return i.SendIPv4(now, dst, s.Protocol, seg, s.Options)
	}
	copy(b, seg)
	i.charge(hw.CostCopyByte, int64(len(seg)))
	return i.OutputIPv4(now, m, dst, s.Protocol, s.Options)
}
