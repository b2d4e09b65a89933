package ipv6

import (
	"encoding/binary"
)

// Next Header values (IANA "Assigned Internet Protocol Numbers"; RFC 8200
// section 4 for the extension headers).
const (
	NextHopByHop uint8 = 0   // RFC 8200 section 4.3
	NextTCP      uint8 = 6   // RFC 9293
	NextUDP      uint8 = 17  // RFC 768
	NextRouting  uint8 = 43  // RFC 8200 section 4.4
	NextFragment uint8 = 44  // RFC 8200 section 4.5
	NextESP      uint8 = 50  // RFC 4303
	NextAH       uint8 = 51  // RFC 4302
	NextICMPv6   uint8 = 58  // RFC 4443
	NextNone     uint8 = 59  // RFC 8200 section 4.7
	NextDestOpts uint8 = 60  // RFC 8200 section 4.6
	NextMobility uint8 = 135 // RFC 6275; an upper layer to a host without it
	NextHIP      uint8 = 139 // RFC 7401
	NextShim6    uint8 = 140 // RFC 5533
	NextExp1     uint8 = 253 // RFC 3692 experimentation
	NextExp2     uint8 = 254
)

// Sizes and limits.
const (
	// HeaderLen is the fixed header (RFC 8200 section 3).
	HeaderLen = 40
	// MinMTU is the minimum link MTU every IPv6 link has (RFC 8200
	// section 5).
	MinMTU = 1280
	// MaxPayloadLen is the largest payload length without a jumbogram
	// (RFC 2675, which this stack does not implement).
	MaxPayloadLen = 65535
	// DefaultHopLimit is the hop limit the stack sends with (Linux's
	// net.ipv6.conf.*.hop_limit, 64; RFC 4861 section 6.3.2 lets a
	// router advertisement change it).
	DefaultHopLimit = 64
)

// Offsets of fixed-header fields, which ICMPv6 Parameter Problem pointers
// name (RFC 4443 section 3.4).
const (
	OffPayloadLen = 4
	OffNextHeader = 6
	OffHopLimit   = 7
	OffSrc        = 8
	OffDst        = 24
)

// Packet is a zero-copy view of an IPv6 packet. Accessors assume at least
// HeaderLen bytes; use Check or Parse before reading untrusted bytes.
type Packet []byte

// Check validates the lengths of b as an IPv6 packet and returns the view
// trimmed to its payload length (dropping Ethernet padding). A payload
// length of zero, which announces a jumbogram when a hop-by-hop header
// follows (RFC 2675), is taken at face value: the packet is empty.
func Check(b []byte) (Packet, error) {
	if len(b) < HeaderLen {
		return nil, ErrTruncated
	}
	p := Packet(b)
	if p.Version() != 6 {
		return nil, ErrVersion
	}
	n := HeaderLen + int(p.PayloadLen())
	if n > len(b) {
		return nil, ErrTruncated
	}
	return p[:n], nil
}

// Version returns the version field.
func (p Packet) Version() uint8 { return p[0] >> 4 }

// TrafficClass returns the traffic class octet (DSCP and ECN, RFC 2474,
// RFC 3168).
func (p Packet) TrafficClass() uint8 { return p[0]<<4 | p[1]>>4 }

// FlowLabel returns the 20-bit flow label (RFC 6437).
func (p Packet) FlowLabel() uint32 { return binary.BigEndian.Uint32(p[0:4]) & 0xfffff }

// PayloadLen returns the payload length field: the bytes after the fixed
// header, extension headers included.
func (p Packet) PayloadLen() uint16 { return binary.BigEndian.Uint16(p[4:6]) }

// NextHeader returns the type of the header after the fixed header.
func (p Packet) NextHeader() uint8 { return p[6] }

// HopLimit returns the hop limit.
func (p Packet) HopLimit() uint8 { return p[7] }

// Src returns the source address.
func (p Packet) Src() Addr { return Addr(p[8:24]) }

// Dst returns the destination address.
func (p Packet) Dst() Addr { return Addr(p[24:40]) }

// Payload returns the bytes after the fixed header up to the payload
// length.
func (p Packet) Payload() []byte { return p[HeaderLen : HeaderLen+int(p.PayloadLen())] }

// SetVersionClassLabel writes version 6, the traffic class and the flow
// label (its low 20 bits).
func (p Packet) SetVersionClassLabel(tc uint8, label uint32) {
	binary.BigEndian.PutUint32(p[0:4], 6<<28|uint32(tc)<<20|label&0xfffff)
}

// SetPayloadLen writes the payload length.
func (p Packet) SetPayloadLen(v uint16) { binary.BigEndian.PutUint16(p[4:6], v) }

// SetNextHeader writes the next header.
func (p Packet) SetNextHeader(v uint8) { p[6] = v }

// SetHopLimit writes the hop limit.
func (p Packet) SetHopLimit(v uint8) { p[7] = v }

// SetSrc writes the source address.
func (p Packet) SetSrc(a Addr) { copy(p[8:24], a[:]) }

// SetDst writes the destination address.
func (p Packet) SetDst(a Addr) { copy(p[24:40], a[:]) }

// Repr is a parsed fixed header.
type Repr struct {
	Src, Dst Addr
	// NextHeader is the header after the fixed one: an extension header
	// or the upper-layer protocol.
	NextHeader uint8
	// PayloadLen is the length after the fixed header.
	PayloadLen   int
	HopLimit     uint8
	TrafficClass uint8
	// FlowLabel is the 20-bit flow label.
	FlowLabel uint32
}

// Parse validates p's version and lengths and returns its fixed header.
// p may carry trailing padding; Check gives the trimmed view. Extension
// headers are walked by Walk or Receiver.Input, not here.
func Parse(p Packet) (Repr, error) {
	q, err := Check(p)
	if err != nil {
		return Repr{}, err
	}
	return Repr{
		Src: q.Src(), Dst: q.Dst(), NextHeader: q.NextHeader(),
		PayloadLen: int(q.PayloadLen()), HopLimit: q.HopLimit(),
		TrafficClass: q.TrafficClass(), FlowLabel: q.FlowLabel(),
	}, nil
}

// BufferLen returns the length of the header Emit writes.
func (r Repr) BufferLen() int { return HeaderLen }

// Emit writes r as a fixed header into p, which must be at least
// HeaderLen long. There is no header checksum in IPv6 (RFC 8200 section
// 8.1 leaves it to the upper layers).
func (r Repr) Emit(p Packet) {
	p.SetVersionClassLabel(r.TrafficClass, r.FlowLabel)
	p.SetPayloadLen(uint16(r.PayloadLen))
	p.SetNextHeader(r.NextHeader)
	p.SetHopLimit(r.HopLimit)
	p.SetSrc(r.Src)
	p.SetDst(r.Dst)
}
