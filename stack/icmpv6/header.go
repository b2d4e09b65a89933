package icmpv6

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/checksum"
	"github.com/savanna-sim/savanna/stack/ipv6"
)

// Type is the ICMPv6 message type (RFC 4443 section 2.1).
type Type uint8

// Message types. Errors have the high-order bit clear, informational
// messages set (RFC 4443 section 2.1).
const (
	TypeDestUnreach  Type = 1   // RFC 4443 section 3.1
	TypePacketTooBig Type = 2   // RFC 4443 section 3.2
	TypeTimeExceeded Type = 3   // RFC 4443 section 3.3
	TypeParamProblem Type = 4   // RFC 4443 section 3.4
	TypeEchoRequest  Type = 128 // RFC 4443 section 4.1
	TypeEchoReply    Type = 129 // RFC 4443 section 4.2

	TypeMLDQuery  Type = 130 // RFC 2710 section 3 / RFC 3810 section 5.1
	TypeMLDReport Type = 131 // MLDv1 report, RFC 2710 section 3
	TypeMLDDone   Type = 132 // MLDv1 done, RFC 2710 section 3

	TypeRouterSolicitation    Type = 133 // RFC 4861 section 4.1
	TypeRouterAdvertisement   Type = 134 // RFC 4861 section 4.2
	TypeNeighborSolicitation  Type = 135 // RFC 4861 section 4.3
	TypeNeighborAdvertisement Type = 136 // RFC 4861 section 4.4
	TypeRedirect              Type = 137 // RFC 4861 section 4.5

	TypeMLDv2Report Type = 143 // RFC 3810 section 5.2
)

// IsError reports whether t is an error message: types 0 to 127 (RFC 4443
// section 2.1).
func (t Type) IsError() bool { return t < 128 }

// Destination unreachable codes (RFC 4443 section 3.1).
const (
	CodeNoRoute          uint8 = 0
	CodeAdminProhibited  uint8 = 1
	CodeBeyondScope      uint8 = 2
	CodeAddrUnreach      uint8 = 3
	CodePortUnreach      uint8 = 4
	CodeSourcePolicy     uint8 = 5
	CodeRejectRoute      uint8 = 6
	CodeSourceRoutingHdr uint8 = 7 // RFC 6550 section 20.18; parsed, never sent
)

// Time exceeded codes (RFC 4443 section 3.3).
const (
	CodeHopLimitExceeded uint8 = 0
	CodeReasmExceeded    uint8 = 1
)

// Parameter problem codes (RFC 4443 section 3.4, RFC 7112 section 6).
const (
	CodeErroneousHeader   uint8 = 0
	CodeUnknownNextHeader uint8 = 1
	CodeUnknownOption     uint8 = 2
	CodeIncompleteChain   uint8 = 3 // first fragment without the header chain, RFC 7112
)

// HeaderLen is the common header: type, code and checksum (RFC 4443
// section 2.1), followed by 4 bytes whose meaning depends on the type.
const HeaderLen = 4

// MinLen is the shortest message this package parses: the common header
// and the 4 type-dependent bytes every message of RFC 4443 carries.
const MinLen = 8

// NextHeader is ICMPv6's value in the IPv6 Next Header field (RFC 4443
// section 1).
const NextHeader uint8 = 58

// Header is a zero-copy view of an ICMPv6 message's common header.
// Accessors assume at least HeaderLen bytes.
type Header []byte

// Type returns the message type.
func (h Header) Type() Type { return Type(h[0]) }

// Code returns the code.
func (h Header) Code() uint8 { return h[1] }

// Checksum returns the checksum field.
func (h Header) Checksum() uint16 { return binary.BigEndian.Uint16(h[2:4]) }

// SetType writes the type.
func (h Header) SetType(t Type) { h[0] = uint8(t) }

// SetCode writes the code.
func (h Header) SetCode(c uint8) { h[1] = c }

// SetChecksum writes the checksum field.
func (h Header) SetChecksum(v uint16) { binary.BigEndian.PutUint16(h[2:4], v) }

// Checksum returns the ICMPv6 checksum of msg sent from src to dst: the
// one's complement of the one's complement sum of the pseudo-header of
// RFC 8200 section 8.1 (next header 58, msg's length) and msg (RFC 4443
// section 2.3). msg's checksum field must be zero to compute the value to
// send; over a received message with its checksum in place the result is
// zero when the checksum verifies.
func Checksum(src, dst ipv6.Addr, msg []byte) uint16 {
	sum := ipv6.PseudoHeaderSum(src, dst, len(msg), NextHeader)
	return checksum.Finish(checksum.Add(sum, msg))
}

// VerifyChecksum reports whether msg's checksum is correct for src and dst.
func VerifyChecksum(src, dst ipv6.Addr, msg []byte) bool {
	return len(msg) >= HeaderLen && Checksum(src, dst, msg) == 0
}

// FillChecksum zeroes msg's checksum field, computes the checksum for src
// and dst and writes it. msg must hold at least HeaderLen bytes.
func FillChecksum(src, dst ipv6.Addr, msg []byte) {
	h := Header(msg)
	h.SetChecksum(0)
	h.SetChecksum(Checksum(src, dst, msg))
}
