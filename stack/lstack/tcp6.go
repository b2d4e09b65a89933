package lstack

import (
	"encoding/binary"
	"time"

	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/ipv6"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// tcpOutput is the interface's segment sender as the TCP engine's
// Output: TCP's endpoints name either family (tcp.IP), the interface
// has a path for each, and this is where they meet. HeaderLen is read
// once by the engine: 20 (IPv4) on an instance with an IPv4 address, 40
// on an IPv6-only one, so that each advertises the MSS its link allows
// (RFC 9293 section 3.7.1). On a dual-stack instance IPv6 segments are
// then up to 20 bytes larger than the link MTU allows and are
// fragmented at the source (RFC 8200 section 5) until the engine asks
// its network for a header length per connection.
type tcpOutput struct {
	*iface.SegmentSender
	ifc *iface.Interface
	hdr int
	// lent is the buffer of the open loan, for the ports the flow label
	// hashes.
	lent []byte
	// last and lastLabel are the last connection's key and label, so
	// that a run of segments of one flow (bulk, ping-pong) costs a
	// comparison rather than a hash (Linux keeps the label in the
	// socket, np->flow_label; ip6_make_flowlabel, include/net/ipv6.h,
	// derives an automatic one from the flow hash kept with it). Any
	// other segment recomputes its flow's label (ipv6.FlowLabel, a
	// SipHash of the 5-tuple: tens of nanoseconds, no allocation), so
	// there is no per-flow table to fill, bound and clear: a new
	// connection costs one hash, and the label is a pure function of
	// the flow (RFC 6437 section 3: the same for every packet of it).
	// lastLabel 0 (never a label) is empty. The ports are kept as the
	// segment's first four bytes, compared before the addresses.
	lastSrc, lastDst tcp.IP
	lastPorts        uint32
	lastLabel        uint32
}

func newTCPOutput(s *iface.SegmentSender, ifc *iface.Interface) *tcpOutput {
	o := &tcpOutput{SegmentSender: s, ifc: ifc, hdr: s.HeaderLen()}
	if !ifc.HasIPv4() {
		o.hdr = s.HeaderLen6()
	}
	return o
}

// HeaderLen implements tcp.Network.
func (o *tcpOutput) HeaderLen() int { return o.hdr }

// PseudoHeaderSum implements tcp.Network with the family's pseudo-header
// (RFC 9293 section 3.1; RFC 8200 section 8.1).
func (o *tcpOutput) PseudoHeaderSum(src, dst tcp.IP, length int) uint64 {
	if src.Is6() {
		return o.SegmentSender.PseudoHeaderSum6(src.As16(), dst.As16(), length)
	}
	return o.SegmentSender.PseudoHeaderSum(src.As4(), dst.As4(), length)
}

// Lend implements tcp.Output.
func (o *tcpOutput) Lend(n int) ([]byte, uint64) {
	b, tok := o.SegmentSender.Lend(n)
	o.lent = b
	return b, tok
}

// SendLent implements tcp.Output.
func (o *tcpOutput) SendLent(now time.Duration, src, dst tcp.IP, token uint64, n int) error {
	lent := o.lent
	o.lent = nil
	switch {
	case src.Is4() && dst.Is4():
		return o.SegmentSender.SendLent(now, src.As4(), dst.As4(), token, n)
	case src.Is6() && dst.Is6():
		return o.SegmentSender.SendLent6(now, src.As16(), dst.As16(), o.label(src, dst, lent), token, n)
	}
	return iface.ErrBadAddress
}

// SendSegment implements tcp.Output.
func (o *tcpOutput) SendSegment(now time.Duration, src, dst tcp.IP, seg []byte) error {
	switch {
	case src.Is4() && dst.Is4():
		return o.SegmentSender.SendSegment(now, src.As4(), dst.As4(), seg)
	case src.Is6() && dst.Is6():
		return o.SegmentSender.SendSegment6(now, src.As16(), dst.As16(), o.label(src, dst, seg), seg)
	}
	return iface.ErrBadAddress
}

// label returns the flow label of the connection seg belongs to.
func (o *tcpOutput) label(src, dst tcp.IP, seg []byte) uint32 {
	if len(seg) < 4 {
		return 0
	}
	ports := binary.BigEndian.Uint32(seg)
	if o.lastLabel != 0 && ports == o.lastPorts && src == o.lastSrc && dst == o.lastDst {
		return o.lastLabel
	}
	l := o.ifc.FlowLabel6(src.As16(), dst.As16(), ipv6.NextTCP, uint16(ports>>16), uint16(ports))
	o.lastSrc, o.lastDst, o.lastPorts, o.lastLabel = src, dst, ports, l
	return l
}

// input6 hands a TCP segment that came over IPv6 to the engine. A
// segment that acknowledges something is taken as Neighbor Discovery's
// upper-layer reachability hint for its sender (RFC 4861 section 7.3.1;
// the engine does not say whether the ACK was new, so any ACK counts,
// which keeps a busy neighbour REACHABLE without probes).
func (t *tcpInput) input6(now time.Duration, s iface.Segment) {
	if len(s.Payload) > 13 && s.Payload[13]&0x10 != 0 {
		t.ifc.Confirm6(now, s.Src6)
	}
	t.tcp.InputVerified(now, tcp.IPFrom16(s.Src6), tcp.IPFrom16(s.Dst6), s.Payload)
}

// PathMSS implements tcp.PathMSSer: the MSS the path MTU cache allows
// to an IPv6 destination once a Packet Too Big lowered it below the
// link's (RFC 8201), else 0, so that a connection opened afterwards
// starts at the lowered size while every other keeps the MSS the link
// gives it.
func (o *tcpOutput) PathMSS(now time.Duration, dst tcp.IP) int {
	if !dst.Is6() || !o.ifc.HasIPv6() {
		return 0
	}
	if o.ifc.PathMTU6(now, dst.As16()) >= o.ifc.MTU() {
		return 0
	}
	return o.ifc.PathMSS6(now, dst.As16())
}

// followPathMTU has the interface tell the engine of every path MTU a
// Packet Too Big lowered, so that the connections to that destination
// send segments that fit from then on (RFC 8201 section 5.2) instead of
// being fragmented at the source.
func followPathMTU(ifc *iface.Interface, ts *tcp.Stack) {
	ifc.SetPathMTUHandler6(func(_ time.Duration, dst ipv6.Addr, mtu int) {
		ts.LowerPathMSS(tcp.IPFrom16(dst), ipv6.MSSForMTU(mtu))
	})
}
