package ipv4

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// Protocol is the IP protocol number (IANA "Assigned Internet Protocol
// Numbers").
type Protocol uint8

// Protocols the stack carries.
const (
	ProtoICMP Protocol = 1
	ProtoTCP  Protocol = 6
	ProtoUDP  Protocol = 17
)

// Sizes and limits.
const (
	// MinHeaderLen is the header without options.
	MinHeaderLen = 20
	// MaxHeaderLen is the header with 40 bytes of options (IHL 15).
	MaxHeaderLen = 60
	// MaxDatagramLen is the largest datagram, header included.
	MaxDatagramLen = 65535
	// DefaultTTL is the TTL the stack sends with (IANA's recommended
	// 64, RFC 1700 / Linux's ip_default_ttl).
	DefaultTTL = 64
)

const (
	flagDF = 0x4000
	flagMF = 0x2000
	offMsk = 0x1fff
)

// Packet is a zero-copy view of an IPv4 datagram. Accessors assume a
// header of at least MinHeaderLen bytes (and HeaderLen bytes for
// Options/Payload); use Check or Parse before reading untrusted bytes.
type Packet []byte

// Check validates the lengths of b as an IPv4 datagram and returns the
// view trimmed to its total length (dropping Ethernet padding). It does
// not verify the checksum.
func Check(b []byte) (Packet, error) {
	if len(b) < MinHeaderLen {
		return nil, ErrTruncated
	}
	p := Packet(b)
	if p.Version() != 4 {
		return nil, ErrVersion
	}
	hl := p.HeaderLen()
	if hl < MinHeaderLen {
		return nil, ErrHeaderLen
	}
	if hl > len(b) {
		return nil, ErrTruncated
	}
	tl := int(p.TotalLen())
	if tl < hl {
		return nil, ErrTotalLen
	}
	if tl > len(b) {
		return nil, ErrTruncated
	}
	return p[:tl], nil
}

// Version returns the version field.
func (p Packet) Version() uint8 { return p[0] >> 4 }

// HeaderLen returns the header length in bytes (IHL × 4).
func (p Packet) HeaderLen() int { return int(p[0]&0x0f) * 4 }

// TOS returns the type-of-service octet (DSCP and ECN, RFC 2474/3168).
func (p Packet) TOS() uint8 { return p[1] }

// TotalLen returns the total length field.
func (p Packet) TotalLen() uint16 { return binary.BigEndian.Uint16(p[2:4]) }

// Ident returns the identification field.
func (p Packet) Ident() uint16 { return binary.BigEndian.Uint16(p[4:6]) }

// DontFrag reports the DF flag.
func (p Packet) DontFrag() bool { return binary.BigEndian.Uint16(p[6:8])&flagDF != 0 }

// MoreFrags reports the MF flag.
func (p Packet) MoreFrags() bool { return binary.BigEndian.Uint16(p[6:8])&flagMF != 0 }

// FragOffset returns the fragment offset in bytes.
func (p Packet) FragOffset() int { return int(binary.BigEndian.Uint16(p[6:8])&offMsk) * 8 }

// IsFragment reports whether the datagram is a fragment (MF set or a
// non-zero offset).
func (p Packet) IsFragment() bool { return binary.BigEndian.Uint16(p[6:8])&(flagMF|offMsk) != 0 }

// TTL returns the time-to-live.
func (p Packet) TTL() uint8 { return p[8] }

// Protocol returns the protocol field.
func (p Packet) Protocol() Protocol { return Protocol(p[9]) }

// Checksum returns the header checksum field.
func (p Packet) Checksum() uint16 { return binary.BigEndian.Uint16(p[10:12]) }

// Src returns the source address.
func (p Packet) Src() [4]byte { return [4]byte(p[12:16]) }

// Dst returns the destination address.
func (p Packet) Dst() [4]byte { return [4]byte(p[16:20]) }

// Options returns the option bytes (possibly empty).
func (p Packet) Options() []byte { return p[MinHeaderLen:p.HeaderLen()] }

// Payload returns the bytes after the header up to the total length.
func (p Packet) Payload() []byte { return p[p.HeaderLen():p.TotalLen()] }

// VerifyChecksum reports whether the header checksum is correct.
func (p Packet) VerifyChecksum() bool { return checksum.Checksum(p[:p.HeaderLen()]) == 0 }

// SetVersionIHL writes version 4 and a header length in bytes.
func (p Packet) SetVersionIHL(headerLen int) { p[0] = 0x40 | uint8(headerLen/4)&0x0f }

// SetTOS writes the type-of-service octet.
func (p Packet) SetTOS(v uint8) { p[1] = v }

// SetTotalLen writes the total length.
func (p Packet) SetTotalLen(v uint16) { binary.BigEndian.PutUint16(p[2:4], v) }

// SetIdent writes the identification.
func (p Packet) SetIdent(v uint16) { binary.BigEndian.PutUint16(p[4:6], v) }

// SetFrag writes the flags and the fragment offset (in bytes, a multiple
// of 8).
func (p Packet) SetFrag(df, mf bool, offset int) {
	v := uint16(offset/8) & offMsk
	if df {
		v |= flagDF
	}
	if mf {
		v |= flagMF
	}
	binary.BigEndian.PutUint16(p[6:8], v)
}

// SetTTL writes the time-to-live.
func (p Packet) SetTTL(v uint8) { p[8] = v }

// SetProtocol writes the protocol.
func (p Packet) SetProtocol(v Protocol) { p[9] = uint8(v) }

// SetChecksum writes the checksum field.
func (p Packet) SetChecksum(v uint16) { binary.BigEndian.PutUint16(p[10:12], v) }

// SetSrc writes the source address.
func (p Packet) SetSrc(a [4]byte) { copy(p[12:16], a[:]) }

// SetDst writes the destination address.
func (p Packet) SetDst(a [4]byte) { copy(p[16:20], a[:]) }

// FillChecksum computes and writes the header checksum.
func (p Packet) FillChecksum() {
	p.SetChecksum(0)
	p.SetChecksum(checksum.Checksum(p[:p.HeaderLen()]))
}

// Repr is a parsed IPv4 header.
type Repr struct {
	Src, Dst [4]byte
	Protocol Protocol
	// PayloadLen is the length after the header (of this fragment).
	PayloadLen int
	TTL        uint8
	TOS        uint8
	Ident      uint16
	DontFrag   bool
	MoreFrags  bool
	// FragOffset is the fragment offset in bytes.
	FragOffset int
	// HeaderLen is the parsed header length, options included; Emit
	// always writes MinHeaderLen.
	HeaderLen int
}

// Parse validates p (lengths, version, checksum unless hardware verified
// it, fragment sanity) and returns its header. Options are skipped. p may
// carry trailing padding; use Check to get the trimmed view.
func Parse(p Packet, verifyChecksum bool) (Repr, error) {
	q, err := Check(p)
	if err != nil {
		return Repr{}, err
	}
	if verifyChecksum && !q.VerifyChecksum() {
		return Repr{}, ErrChecksum
	}
	hl := q.HeaderLen()
	r := Repr{
		Src: q.Src(), Dst: q.Dst(), Protocol: q.Protocol(),
		PayloadLen: len(q) - hl, TTL: q.TTL(), TOS: q.TOS(), Ident: q.Ident(),
		DontFrag: q.DontFrag(), MoreFrags: q.MoreFrags(), FragOffset: q.FragOffset(),
		HeaderLen: hl,
	}
	if r.MoreFrags || r.FragOffset > 0 {
		if r.PayloadLen == 0 || (r.MoreFrags && r.PayloadLen%8 != 0) {
			return Repr{}, ErrFragLength
		}
		if r.FragOffset+r.PayloadLen+hl > MaxDatagramLen {
			return Repr{}, ErrFragTooLong
		}
	}
	return r, nil
}

// IsFragment reports whether r describes a fragment.
func (r Repr) IsFragment() bool { return r.MoreFrags || r.FragOffset > 0 }

// Emit writes r as a 20-byte header into p, which must be at least
// MinHeaderLen long. With fillChecksum false the checksum field is left
// zero for hardware to fill (DPDK's RTE_MBUF_F_TX_IP_CKSUM).
func (r Repr) Emit(p Packet, fillChecksum bool) {
	p.SetVersionIHL(MinHeaderLen)
	p.SetTOS(r.TOS)
	p.SetTotalLen(uint16(MinHeaderLen + r.PayloadLen))
	p.SetIdent(r.Ident)
	p.SetFrag(r.DontFrag, r.MoreFrags, r.FragOffset)
	p.SetTTL(r.TTL)
	p.SetProtocol(r.Protocol)
	p.SetChecksum(0)
	p.SetSrc(r.Src)
	p.SetDst(r.Dst)
	if fillChecksum {
		p.SetChecksum(checksum.Checksum(p[:MinHeaderLen]))
	}
}

// MaxFragmentPayload returns the largest fragment payload for a link MTU
// and header length: what fits, rounded down to 8 bytes (RFC 791).
func MaxFragmentPayload(mtu, headerLen int) int { return (mtu - headerLen) &^ 7 }
