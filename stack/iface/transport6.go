package iface

import (
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// ICMPv6Error is an ICMPv6 error about a packet we sent (RFC 4443), or
// the local report of a next hop that did not resolve (destination
// unreachable code 3, RFC 4861 section 7.2.2).
type ICMPv6Error struct {
	// From is the node that sent it (our own address for a local
	// report).
	From ipv6.Addr
	// Type and Code of the message (icmpv6.TypeDestUnreach ...).
	Type, Code uint8
	// MTU is Packet Too Big's MTU (RFC 8201): the interface has applied
	// it to the path MTU cache already (PathMTU6, PathMSS6).
	MTU uint32
	// Pointer is Parameter Problem's pointer.
	Pointer uint32
	// Quoted is our packet from its IPv6 header, as much as the error
	// carried. Valid only during the call.
	Quoted ipv6.Packet
}

// ErrorHandler6 is implemented by a TransportHandler that wants the
// ICMPv6 errors quoting its segments.
type ErrorHandler6 interface {
	HandleICMPv6Error(now time.Duration, e ICMPv6Error)
}

// HeaderLen6 is the IPv6 header in front of every segment: 40, as
// OutputIPv6 sends no extension headers.
func (s *SegmentSender) HeaderLen6() int { return ipv6.HeaderLen }

// PseudoHeaderSum6 returns the unfolded sum of the IPv6 pseudo-header of
// a segment of length bytes (RFC 8200 section 8.1).
func (s *SegmentSender) PseudoHeaderSum6(src, dst ipv6.Addr, length int) uint64 {
	return ipv6.PseudoHeaderSum(src, dst, length, uint8(s.proto))
}

// SendLent6 is SendLent over IPv6, with the flow label of the segment's
// connection (RFC 6437). src must be an assigned address of ours.
func (s *SegmentSender) SendLent6(now time.Duration, src, dst ipv6.Addr, label uint32, token uint64, n int) error {
	i := s.ifc
	m := s.loan
	if i.v6 == nil || m == nil || token != s.token {
		s.refuse6()
		return ErrLoanEnded
	}
	s.loan = nil
	if !i.IsAssigned6(src) {
		m.Free()
		s.refuse6()
		i.stats.Tx.BadAddress++
		return ErrBadAddress
	}
	if n <= 0 || n > s.loanLen {
		m.Free()
		s.refuse6()
		return ErrLoanEnded
	}
	if m.Headroom() < HeaderRoom6 {
		m.Free()
		s.refuse6()
		i.stats.Tx.NoHeadroom++
		return ErrNoHeadroom
	}
	_, _ = m.Append(n)
	return i.output6(now, m, dst, uint8(s.proto), s.opts6(src, label), true)
}

// SendSegment6 is SendSegment over IPv6.
func (s *SegmentSender) SendSegment6(now time.Duration, src, dst ipv6.Addr, label uint32, seg []byte) error {
	i := s.ifc
	if i.v6 == nil || !i.IsAssigned6(src) {
		s.refuse6()
		i.stats.Tx.BadAddress++
		return ErrBadAddress
	}
	var m *hw.Mbuf
	if m = i.AllocTransport6(); m == nil {
		s.refuse6()
		return ErrNoMbuf
	}
	b, err := m.Append(len(seg))
	if err != nil {
		m.Free()
		return i.SendIPv6(now, dst, uint8(s.proto), seg, s.opts6(src, label))
	}
	copy(b, seg)
	i.charge(hw.CostCopyByte, int64(len(seg)))
	return i.output6(now, m, dst, uint8(s.proto), s.opts6(src, label), true)
}

// opts6 are the sender's options for one IPv6 segment. TCP's DontFrag
// is not carried over: an IPv6 source may fragment (RFC 8200 section
// 5), which keeps a connection going while a Packet Too Big lowered the
// path below the MSS it negotiated, until the engine has lowered it
// (SetPathMTUHandler6).
func (s *SegmentSender) opts6(src ipv6.Addr, label uint32) OutputOptions6 {
	return OutputOptions6{TrafficClass: s.opts.TOS, HopLimit: s.opts.TTL, FlowLabel: label, Checksum: s.opts.Checksum, Src: src}
}

func (s *SegmentSender) refuse6() {
	if v := s.ifc.v6; v != nil {
		v.stats.Out.Requests++
		v.stats.Out.Discards++
	}
}
