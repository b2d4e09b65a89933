package icmpv6

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Message is a zero-copy view of an ICMPv6 message of RFC 4443: the
// common header and the 4 type-dependent bytes. Accessors assume at least
// MinLen bytes.
type Message []byte

// Header returns the common header view.
func (m Message) Header() Header { return Header(m) }

// Ident returns the echo identifier (RFC 4443 section 4.1).
func (m Message) Ident() uint16 { return binary.BigEndian.Uint16(m[4:6]) }

// Seq returns the echo sequence number.
func (m Message) Seq() uint16 { return binary.BigEndian.Uint16(m[6:8]) }

// MTU returns the MTU of a Packet Too Big (RFC 4443 section 3.2).
func (m Message) MTU() uint32 { return binary.BigEndian.Uint32(m[4:8]) }

// Pointer returns the pointer of a Parameter Problem (RFC 4443 section
// 3.4): the offset in the invoking packet of the byte at fault.
func (m Message) Pointer() uint32 { return binary.BigEndian.Uint32(m[4:8]) }

// Body returns what follows the 8 bytes: echo data or the invoking
// packet.
func (m Message) Body() []byte { return m[MinLen:] }

// Repr is a parsed ICMPv6 message of RFC 4443.
type Repr struct {
	Type Type
	Code uint8
	// Ident and Seq are the echo fields.
	Ident, Seq uint16
	// MTU is the next-hop MTU of Packet Too Big.
	MTU uint32
	// Pointer is the offset of the byte at fault of Parameter Problem.
	Pointer uint32
	// Data is the echo data or the invoking packet; Parse makes it a view
	// into the message, Emit copies it unless it is already in place.
	Data []byte
}

// Parse validates msg, received from src for dst (length, the checksum
// unless hardware verified it, and for error messages an invoking packet
// that starts with an IPv6 header), and returns its fields. Unknown types
// parse with only Type, Code and Data set: RFC 4443 section 2.4 (a) and
// (b) say what to do with them, and ND and MLD messages are parsed by
// stack/ndp.
func Parse(msg []byte, src, dst ipv6.Addr, verifyChecksum bool) (Repr, error) {
	if len(msg) < MinLen {
		return Repr{}, ErrTruncated
	}
	if verifyChecksum && !VerifyChecksum(src, dst, msg) {
		return Repr{}, ErrChecksum
	}
	m := Message(msg)
	r := Repr{Type: m.Header().Type(), Code: m.Header().Code(), Data: m.Body()}
	switch r.Type {
	case TypeEchoRequest, TypeEchoReply:
		r.Ident, r.Seq = m.Ident(), m.Seq()
	case TypePacketTooBig:
		r.MTU = m.MTU()
	case TypeParamProblem:
		r.Pointer = m.Pointer()
	}
	if r.Type.IsError() {
		if _, err := Invoking(r.Data); err != nil {
			return Repr{}, err
		}
	}
	return r, nil
}

// Invoking checks the invoking packet carried by an error message and
// returns its header view. The packet is truncated by design (RFC 4443
// section 2.4 (c)), so only the fixed header is required; its upper-layer
// header, if quoted, is found with ipv6.UpperLayer.
func Invoking(data []byte) (ipv6.Packet, error) {
	if len(data) < ipv6.HeaderLen {
		return nil, ErrBadQuote
	}
	q := ipv6.Packet(data)
	if q.Version() != 6 {
		return nil, ErrBadQuote
	}
	return q, nil
}

// BufferLen returns the length Emit writes.
func (r Repr) BufferLen() int { return MinLen + len(r.Data) }

// Emit writes r into b (at least BufferLen bytes), as sent from src to
// dst, and fills the checksum. Types other than those of RFC 4443 get
// their 4 type-dependent bytes zeroed.
func (r Repr) Emit(b []byte, src, dst ipv6.Addr) {
	m := Message(b[:r.BufferLen()])
	h := m.Header()
	h.SetType(r.Type)
	h.SetCode(r.Code)
	binary.BigEndian.PutUint32(m[4:8], 0)
	switch r.Type {
	case TypeEchoRequest, TypeEchoReply:
		binary.BigEndian.PutUint16(m[4:6], r.Ident)
		binary.BigEndian.PutUint16(m[6:8], r.Seq)
	case TypePacketTooBig:
		binary.BigEndian.PutUint32(m[4:8], r.MTU)
	case TypeParamProblem:
		binary.BigEndian.PutUint32(m[4:8], r.Pointer)
	}
	if len(r.Data) > 0 && &m[MinLen] != &r.Data[0] {
		copy(m[MinLen:], r.Data)
	}
	FillChecksum(src, dst, m)
}
