package icmp

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ipv4"
)

// Type is the ICMP message type.
type Type uint8

// Message types (RFC 792, RFC 950).
const (
	TypeEchoReply      Type = 0
	TypeDestUnreach    Type = 3
	TypeSourceQuench   Type = 4
	TypeRedirect       Type = 5
	TypeEchoRequest    Type = 8
	TypeTimeExceeded   Type = 11
	TypeParamProblem   Type = 12
	TypeTimestamp      Type = 13
	TypeTimestampReply Type = 14
)

// IsError reports whether t is an ICMP error message (RFC 1122 section
// 3.2.2): one that quotes an offending datagram.
func (t Type) IsError() bool {
	switch t {
	case TypeDestUnreach, TypeSourceQuench, TypeRedirect, TypeTimeExceeded, TypeParamProblem:
		return true
	}
	return false
}

// Destination unreachable codes (RFC 792, RFC 1122 section 3.2.2.1).
const (
	CodeNetUnreach   uint8 = 0
	CodeHostUnreach  uint8 = 1
	CodeProtoUnreach uint8 = 2
	CodePortUnreach  uint8 = 3
	CodeFragNeeded   uint8 = 4 // with the next-hop MTU, RFC 1191
	CodeAdminProhib  uint8 = 13
)

// Time exceeded codes (RFC 792).
const (
	CodeTTLExceeded   uint8 = 0
	CodeReasmExceeded uint8 = 1
)

// HeaderLen is the fixed ICMP header: type, code, checksum and 4 bytes
// that depend on the type.
const HeaderLen = 8

// QuoteLen is how much of the offending datagram's payload an error
// quotes (RFC 792: "the first 64 bits of the original data datagram").
const QuoteLen = 8

// Packet is a zero-copy view of an ICMP message. Accessors assume at
// least HeaderLen bytes.
type Packet []byte

// Type returns the type.
func (p Packet) Type() Type { return Type(p[0]) }

// Code returns the code.
func (p Packet) Code() uint8 { return p[1] }

// Checksum returns the checksum field.
func (p Packet) Checksum() uint16 { return binary.BigEndian.Uint16(p[2:4]) }

// Ident returns the echo identifier.
func (p Packet) Ident() uint16 { return binary.BigEndian.Uint16(p[4:6]) }

// Seq returns the echo sequence number.
func (p Packet) Seq() uint16 { return binary.BigEndian.Uint16(p[6:8]) }

// NextHopMTU returns the next-hop MTU of a fragmentation-needed message
// (RFC 1191 section 4); zero from routers that predate it.
func (p Packet) NextHopMTU() uint16 { return binary.BigEndian.Uint16(p[6:8]) }

// Pointer returns the octet pointer of a parameter problem.
func (p Packet) Pointer() uint8 { return p[4] }

// Data returns what follows the header: echo data or the quoted datagram.
func (p Packet) Data() []byte { return p[HeaderLen:] }

// SetType writes the type.
func (p Packet) SetType(t Type) { p[0] = uint8(t) }

// SetCode writes the code.
func (p Packet) SetCode(c uint8) { p[1] = c }

// SetChecksum writes the checksum field.
func (p Packet) SetChecksum(v uint16) { binary.BigEndian.PutUint16(p[2:4], v) }

// VerifyChecksum reports whether the checksum over the whole message is
// correct.
func (p Packet) VerifyChecksum() bool { return checksum.Checksum(p) == 0 }

// FillChecksum computes and writes the checksum over the whole message.
func (p Packet) FillChecksum() {
	p.SetChecksum(0)
	p.SetChecksum(checksum.Checksum(p))
}

// Repr is a parsed ICMP message.
type Repr struct {
	Type Type
	Code uint8
	// Ident and Seq are the echo fields.
	Ident, Seq uint16
	// MTU is the next-hop MTU of fragmentation needed.
	MTU uint16
	// Pointer is the octet pointer of parameter problem.
	Pointer uint8
	// Data is the echo data or the quoted datagram; Parse makes it a view
	// into the message, Emit copies it unless it is already in place.
	Data []byte
}

// Parse validates p (length, checksum unless verified by hardware, and
// for error messages a quote that holds an IPv4 header plus 8 bytes) and
// returns its fields. Unknown types parse; the caller counts and ignores
// them.
func Parse(p Packet, verifyChecksum bool) (Repr, error) {
	if len(p) < HeaderLen {
		return Repr{}, ErrTruncated
	}
	if verifyChecksum && !p.VerifyChecksum() {
		return Repr{}, ErrChecksum
	}
	r := Repr{Type: p.Type(), Code: p.Code(), Data: p.Data()}
	switch r.Type {
	case TypeEchoRequest, TypeEchoReply, TypeTimestamp, TypeTimestampReply:
		r.Ident, r.Seq = p.Ident(), p.Seq()
	case TypeDestUnreach:
		if r.Code == CodeFragNeeded {
			r.MTU = p.NextHopMTU()
		}
	case TypeParamProblem:
		r.Pointer = p.Pointer()
	}
	if r.Type.IsError() {
		if _, err := Quoted(r.Data); err != nil {
			return Repr{}, err
		}
	}
	return r, nil
}

// Quoted checks the datagram quoted by an error message and returns its
// IPv4 header view; the quoted transport bytes are q[q.HeaderLen():].
// Only the header's own lengths are checked: the quote is truncated by
// design, so the total length field is not.
func Quoted(data []byte) (ipv4.Packet, error) {
	if len(data) < ipv4.MinHeaderLen {
		return nil, ErrBadQuote
	}
	q := ipv4.Packet(data)
	if q.Version() != 4 || q.HeaderLen() < ipv4.MinHeaderLen || len(data) < q.HeaderLen()+QuoteLen {
		return nil, ErrBadQuote
	}
	return q, nil
}

// BufferLen returns the length Emit writes.
func (r Repr) BufferLen() int { return HeaderLen + len(r.Data) }

// Emit writes r into p (at least BufferLen bytes) and fills the checksum.
func (r Repr) Emit(p Packet) {
	p.SetType(r.Type)
	p.SetCode(r.Code)
	binary.BigEndian.PutUint32(p[4:8], 0)
	switch r.Type {
	case TypeEchoRequest, TypeEchoReply, TypeTimestamp, TypeTimestampReply:
		binary.BigEndian.PutUint16(p[4:6], r.Ident)
		binary.BigEndian.PutUint16(p[6:8], r.Seq)
	case TypeDestUnreach:
		binary.BigEndian.PutUint16(p[6:8], r.MTU)
	case TypeParamProblem:
		p[4] = r.Pointer
	}
	if len(r.Data) > 0 && &p[HeaderLen] != &r.Data[0] {
		copy(p[HeaderLen:], r.Data)
	}
	p[:r.BufferLen()].FillChecksum()
}
