package arp

import (
	"encoding/binary"

	"github.com/savanna-sim/savanna/stack/ether"
)

// Operation is the ARP opcode (ar$op).
type Operation uint16

// Opcodes of RFC 826.
const (
	OpRequest Operation = 1
	OpReply   Operation = 2
)

// Field values for IPv4 over Ethernet.
const (
	// HardwareEthernet is ar$hrd for Ethernet (IANA ARP parameters).
	HardwareEthernet = 1
	// PacketLen is the length of an IPv4-over-Ethernet ARP packet.
	PacketLen = 28
)

// Packet is a zero-copy view of an ARP packet. Accessors assume at least
// PacketLen bytes: call Parse, or check the length, first.
type Packet []byte

// HardwareType returns ar$hrd.
func (p Packet) HardwareType() uint16 { return binary.BigEndian.Uint16(p[0:2]) }

// ProtocolType returns ar$pro.
func (p Packet) ProtocolType() uint16 { return binary.BigEndian.Uint16(p[2:4]) }

// HardwareLen returns ar$hln.
func (p Packet) HardwareLen() uint8 { return p[4] }

// ProtocolLen returns ar$pln.
func (p Packet) ProtocolLen() uint8 { return p[5] }

// Operation returns ar$op.
func (p Packet) Operation() Operation { return Operation(binary.BigEndian.Uint16(p[6:8])) }

// SenderHW returns ar$sha.
func (p Packet) SenderHW() ether.Addr { return ether.Addr(p[8:14]) }

// SenderIP returns ar$spa.
func (p Packet) SenderIP() [4]byte { return [4]byte(p[14:18]) }

// TargetHW returns ar$tha.
func (p Packet) TargetHW() ether.Addr { return ether.Addr(p[18:24]) }

// TargetIP returns ar$tpa.
func (p Packet) TargetIP() [4]byte { return [4]byte(p[24:28]) }

// SetOperation writes ar$op.
func (p Packet) SetOperation(op Operation) { binary.BigEndian.PutUint16(p[6:8], uint16(op)) }

// Repr is a parsed IPv4-over-Ethernet ARP packet.
type Repr struct {
	Op       Operation
	SenderHW ether.Addr
	SenderIP [4]byte
	TargetHW ether.Addr
	TargetIP [4]byte
}

// Parse validates p as IPv4-over-Ethernet ARP and returns its fields.
// Bytes after the 28 of the packet (Ethernet padding) are ignored.
func Parse(p Packet) (Repr, error) {
	if len(p) < PacketLen {
		return Repr{}, ErrTruncated
	}
	if p.HardwareType() != HardwareEthernet || p.HardwareLen() != 6 {
		return Repr{}, ErrHardwareType
	}
	if p.ProtocolType() != uint16(ether.TypeIPv4) || p.ProtocolLen() != 4 {
		return Repr{}, ErrProtocolType
	}
	op := p.Operation()
	if op != OpRequest && op != OpReply {
		return Repr{}, ErrOperation
	}
	r := Repr{Op: op, SenderHW: p.SenderHW(), SenderIP: p.SenderIP(), TargetHW: p.TargetHW(), TargetIP: p.TargetIP()}
	if r.SenderHW.IsMulticast() {
		return Repr{}, ErrSenderAddr
	}
	return r, nil
}

// Emit writes r into the first PacketLen bytes of p, which must be long
// enough.
func (r Repr) Emit(p Packet) {
	binary.BigEndian.PutUint16(p[0:2], HardwareEthernet)
	binary.BigEndian.PutUint16(p[2:4], uint16(ether.TypeIPv4))
	p[4], p[5] = 6, 4
	p.SetOperation(r.Op)
	copy(p[8:14], r.SenderHW[:])
	copy(p[14:18], r.SenderIP[:])
	copy(p[18:24], r.TargetHW[:])
	copy(p[24:28], r.TargetIP[:])
}

// IsGratuitous reports whether r announces its sender's own mapping:
// sender and target protocol addresses are equal (RFC 5227 section 3,
// RFC 5944 section 4.6).
func (r Repr) IsGratuitous() bool { return r.SenderIP == r.TargetIP }
