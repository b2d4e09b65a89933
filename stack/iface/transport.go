package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ipv4"
	"github.com/savanna-sim/savanna/stack/ipv6"
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
	// V6 says the segment came over IPv6: Src6, Dst6 and IP6 are set
	// instead of Src, Dst and IP, TTL holds the hop limit and TOS the
	// traffic class.
	V6         bool
	Src6, Dst6 ipv6.Addr
	IP6        ipv6.Packet
	// FlowLabel is the IPv6 flow label (RFC 6437).
	FlowLabel uint32
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
	// ChecksumTCP: the interface fills the TCP checksum (through
	// stack/tcp's SetChecksum or SetPseudoChecksum), in software or
	// through the NIC's TCP checksum offload.
	ChecksumTCP
	// ChecksumUDP: the interface fills the UDP checksum (through
	// udp.Packet), in software or through the NIC's offload.
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

// SegmentSender is the interface as a transport engine's output, in the
// shape of stack/tcp's Output over IPv4 addresses (stack/lstack adapts
// tcp.IP to them at its edge): the IPv4 header length and pseudo-header
// the engine's arithmetic and checksums need, and two ways to send a
// segment to OutputIPv4: built in a buffer the sender lends (Lend, then
// SendLent: no copy) or handed over by copy (SendSegment). The protocol
// and the options apply to every segment; with Options.Checksum set the
// interface (re)computes the transport checksum, in software or through
// the NIC's offload, so the engine may leave only the pseudo-header sum in
// it. Make one with NewSegmentSender; it is not safe for concurrent use.
type SegmentSender struct {
	ifc   *Interface
	proto ipv4.Protocol
	opts  OutputOptions
	// loan is the mbuf whose tailroom the last Lend lent (loanLen bytes
	// of it) under token, until SendLent sends it or the next Lend takes
	// it back; nil when none is lent. Tokens count up from 1 and are
	// never reused.
	loan    *hw.Mbuf
	loanLen int
	token   uint64
}

// NewSegmentSender returns a sender of protocol proto's segments through
// ifc with opts (stack/lstack's, for TCP: ipv4.ProtoTCP, DontFrag, and
// ChecksumTCP when the NIC offloads the checksum).
func NewSegmentSender(ifc *Interface, proto ipv4.Protocol, opts OutputOptions) *SegmentSender {
	return &SegmentSender{ifc: ifc, proto: proto, opts: opts}
}

// HeaderLen returns the length of the IPv4 header in front of every
// segment: 20, as OutputIPv4 sends no options.
func (s *SegmentSender) HeaderLen() int { return ipv4.MinHeaderLen }

// PseudoHeaderSum returns the unfolded one's-complement sum of the IPv4
// pseudo-header of a segment of length bytes from src to dst: source,
// destination, zero, protocol and length (RFC 9293 section 3.1, RFC 768).
func (s *SegmentSender) PseudoHeaderSum(src, dst [4]byte, length int) uint64 {
	return pseudoHeaderSum(src, dst, s.proto, length)
}

// Lend lends the transport the first n bytes of the tailroom of an mbuf,
// with room for the IPv4 and Ethernet headers in front, to build one
// segment in; SendLent then sends it without a copy (Gazelle's zero-copy
// path of lwIP, where a segment is written once, straight into the buffer
// the NIC sends). The token names the loan. It returns (nil, 0) when no
// mbuf (counted in tx.no_mbuf) or not n bytes of room can be had; the
// transport then builds the segment elsewhere and calls SendSegment.
//
// One buffer is lent at a time: a loan that was not sent is taken back by
// the next Lend, which lends the same mbuf again under a new token, so an
// abandoned loan holds no extra mbuf and its token is refused by SendLent
// (ErrLoanEnded) instead of sending what the buffer holds by then.
func (s *SegmentSender) Lend(n int) ([]byte, uint64) {
	m := s.loan
	s.loan = nil
	if m == nil {
		if m = s.ifc.AllocTransport(); m == nil {
			return nil, 0
		}
	}
	if n <= 0 || m.Tailroom() < n {
		m.Free()
		return nil, 0
	}
	s.loan, s.loanLen = m, n
	s.token++
	start := m.DataOff + m.DataLen
	return m.Buf[start : start+n : start+n], s.token
}

// SendLent sends the first n bytes of the buffer lent under token from our
// address to dst, in place (through OutputIPv4), and ends the loan
// whatever the outcome. A token that names no open loan (sent already,
// taken back by a later Lend, or never lent) fails with ErrLoanEnded and
// sends nothing, and so does an n outside 1..the length lent (that loan
// ends); both count as a datagram asked for and discarded
// (ip.out_requests, ip.out_discards). src must be our address.
func (s *SegmentSender) SendLent(now time.Duration, src, dst [4]byte, token uint64, n int) error {
	i := s.ifc
	m := s.loan
	if m == nil || token != s.token {
		i.stats.IP.OutRequests++
		i.stats.IP.OutDiscards++
		return ErrLoanEnded
	}
	s.loan = nil
	if src != i.ip {
		m.Free()
		return i.badSource()
	}
	if n <= 0 || n > s.loanLen {
		m.Free()
		i.stats.IP.OutRequests++
		i.stats.IP.OutDiscards++
		return ErrLoanEnded
	}
	_, _ = m.Append(n) // within the tailroom Lend checked
	return i.OutputIPv4(now, m, dst, s.proto, s.opts)
}

// SendSegment sends seg, held outside any mbuf, from our address to dst:
// copied into an mbuf, then OutputIPv4. src must be our address.
func (s *SegmentSender) SendSegment(now time.Duration, src, dst [4]byte, seg []byte) error {
	i := s.ifc
	if src != i.ip {
		return i.badSource()
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
		return i.SendIPv4(now, dst, s.proto, seg, s.opts)
	}
	copy(b, seg)
	i.charge(hw.CostCopyByte, int64(len(seg)))
	return i.OutputIPv4(now, m, dst, s.proto, s.opts)
}

// badSource counts a segment a transport asked to send from an address
// that is not ours.
func (i *Interface) badSource() error {
	i.stats.IP.OutRequests++
	i.stats.IP.OutDiscards++
	i.stats.Tx.BadAddress++
	return ErrBadAddress
}
