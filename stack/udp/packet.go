package udp

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// HeaderLen is the UDP header length.
const HeaderLen = 8

// protoUDP is the IPv4 protocol number, for the pseudo-header.
const protoUDP = 17

// Packet is a zero-copy view of a UDP datagram. Accessors assume at least
// HeaderLen bytes.
type Packet []byte

// SrcPort returns the source port.
func (p Packet) SrcPort() uint16 { return binary.BigEndian.Uint16(p[0:2]) }

// DstPort returns the destination port.
func (p Packet) DstPort() uint16 { return binary.BigEndian.Uint16(p[2:4]) }

// Length returns the length field (header plus data).
func (p Packet) Length() uint16 { return binary.BigEndian.Uint16(p[4:6]) }

// Checksum returns the checksum field.
func (p Packet) Checksum() uint16 { return binary.BigEndian.Uint16(p[6:8]) }

// Payload returns the data up to the length field.
func (p Packet) Payload() []byte { return p[HeaderLen:p.Length()] }

// SetSrcPort writes the source port.
func (p Packet) SetSrcPort(v uint16) { binary.BigEndian.PutUint16(p[0:2], v) }

// SetDstPort writes the destination port.
func (p Packet) SetDstPort(v uint16) { binary.BigEndian.PutUint16(p[2:4], v) }

// SetLength writes the length field.
func (p Packet) SetLength(v uint16) { binary.BigEndian.PutUint16(p[4:6], v) }

// SetChecksum writes the checksum field.
func (p Packet) SetChecksum(v uint16) { binary.BigEndian.PutUint16(p[6:8], v) }

// VerifyChecksum reports whether the checksum is absent (zero) or correct
// over the pseudo-header of src and dst and the first Length() bytes.
func (p Packet) VerifyChecksum(src, dst [4]byte) bool {
	if p.Checksum() == 0 {
		return true
	}
	n := int(p.Length())
	sum := checksum.PseudoHeaderV4(src, dst, protoUDP, n)
	return checksum.Finish(checksum.Add(sum, p[:n])) == 0
}

// FillChecksum computes and writes the checksum over the pseudo-header
// and the first Length() bytes, sending 0xffff for a computed zero.
func (p Packet) FillChecksum(src, dst [4]byte) {
	n := int(p.Length())
	p[:n].FillChecksumPseudo(checksum.PseudoHeaderV4(src, dst, protoUDP, n))
}

// FillChecksumPseudo computes and writes the checksum of all of p's
// bytes under the pseudo-header whose unfolded sum is pseudo (supplied
// by the network layer, which alone knows its pseudo-header: RFC 768 for
// IPv4), sending 0xffff for a computed zero (RFC 768: zero means "no
// checksum").
func (p Packet) FillChecksumPseudo(pseudo uint64) {
	p.SetChecksum(0)
	c := checksum.Finish(checksum.Add(pseudo, p))
	if c == 0 {
		c = 0xffff
	}
	p.SetChecksum(c)
}

// SetPseudoChecksum writes only the folded pseudo-header sum pseudo, the
// value a NIC with UDP checksum offload finishes over the datagram
// (DPDK's RTE_MBUF_F_TX_UDP_CKSUM convention).
func (p Packet) SetPseudoChecksum(pseudo uint64) { p.SetChecksum(checksum.Fold(pseudo)) }

// PseudoHeaderChecksum returns the folded, uncomplemented pseudo-header
// sum, the value hardware checksum offload expects in the checksum field
// (DPDK's rte_ipv4_phdr_cksum).
func PseudoHeaderChecksum(src, dst [4]byte, length int) uint16 {
	return checksum.Fold(checksum.PseudoHeaderV4(src, dst, protoUDP, length))
}

// Repr is a parsed UDP header.
type Repr struct {
	SrcPort, DstPort uint16
	// PayloadLen is the data length (Length() - 8).
	PayloadLen int
	// Checksummed says the datagram carried a checksum.
	Checksummed bool
}

// Check validates the lengths of b as a UDP datagram (a whole header, a
// length field that covers it and fits in b) and returns the view
// trimmed to the length field: bytes beyond it are ignored, as RFC 768
// implies. It does not verify the checksum (Parse does).
func Check(b []byte) (Packet, error) {
	if len(b) < HeaderLen {
		return nil, ErrTruncated
	}
	p := Packet(b)
	n := int(p.Length())
	if n < HeaderLen {
		return nil, ErrLength
	}
	if n > len(b) {
		return nil, ErrTruncated
	}
	return p[:n], nil
}

// Parse validates p (length field, checksum unless verified by hardware)
// against the pseudo-header of src and dst. Bytes beyond the length field
// are ignored, as RFC 768 implies.
func Parse(p Packet, src, dst [4]byte, verifyChecksum bool) (Repr, error) {
	q, err := Check(p)
	if err != nil {
		return Repr{}, err
	}
	if verifyChecksum && !q.VerifyChecksum(src, dst) {
		return Repr{}, ErrChecksum
	}
	return Repr{SrcPort: q.SrcPort(), DstPort: q.DstPort(), PayloadLen: len(q) - HeaderLen, Checksummed: q.Checksum() != 0}, nil
}

// BufferLen returns the datagram length Emit describes.
func (r Repr) BufferLen() int { return HeaderLen + r.PayloadLen }

// Emit writes the header into p, whose payload (the PayloadLen bytes
// after the header) must already be in place. With fillChecksum it
// computes the checksum; without, it writes the pseudo-header sum for
// hardware offload (DPDK's RTE_MBUF_F_TX_UDP_CKSUM convention).
func (r Repr) Emit(p Packet, src, dst [4]byte, fillChecksum bool) {
	p.SetSrcPort(r.SrcPort)
	p.SetDstPort(r.DstPort)
	p.SetLength(uint16(r.BufferLen()))
	if fillChecksum {
		p.FillChecksum(src, dst)
		return
	}
	p.SetChecksum(PseudoHeaderChecksum(src, dst, r.BufferLen()))
}
