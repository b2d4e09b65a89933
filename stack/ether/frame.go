package ether

import "encoding/binary"

// EtherType is the 16-bit protocol field of an Ethernet II frame (IEEE
// Registration Authority assignments).
type EtherType uint16

// EtherTypes the stack knows.
const (
	TypeIPv4 EtherType = 0x0800
	TypeARP  EtherType = 0x0806
	TypeVLAN EtherType = 0x8100 // IEEE 802.1Q customer tag
	TypeQinQ EtherType = 0x88a8 // IEEE 802.1ad service tag
	TypeIPv6 EtherType = 0x86dd
)

// minEtherType is the smallest value that is an EtherType rather than an
// IEEE 802.3 length (IEEE 802.3 clause 3.2.6).
const minEtherType = 0x0600

// Header sizes.
const (
	// HeaderLen is the untagged header: destination, source, type.
	HeaderLen = 14
	// VLANTagLen is the size of one 802.1Q tag (TPID + TCI).
	VLANTagLen = 4
	// MinFrameLen is the smallest frame without FCS (64 - 4 bytes);
	// shorter frames are padded on transmit (IEEE 802.3 clause 4.2.3.3).
	MinFrameLen = 60
)

// Frame is a zero-copy view of an Ethernet II frame. Accessors read and
// write the bytes in place; call Check (or Parse) before reading a frame
// of untrusted length, since the accessors assume at least HeaderLen
// bytes.
type Frame []byte

// Check validates that b is long enough for the header it announces and
// returns it as a Frame.
func Check(b []byte) (Frame, error) {
	if len(b) < HeaderLen {
		return nil, ErrTruncated
	}
	f := Frame(b)
	if f.rawType() == TypeVLAN {
		if len(b) < HeaderLen+VLANTagLen {
			return nil, ErrTruncated
		}
	}
	return f, nil
}

// Dst returns the destination address.
func (f Frame) Dst() Addr { return Addr(f[0:6]) }

// Src returns the source address.
func (f Frame) Src() Addr { return Addr(f[6:12]) }

func (f Frame) rawType() EtherType { return EtherType(binary.BigEndian.Uint16(f[12:14])) }

// Tagged reports whether the frame carries an 802.1Q tag.
func (f Frame) Tagged() bool { return f.rawType() == TypeVLAN }

// VLANTCI returns the tag control information of an 802.1Q tag (PCP,
// DEI and VLAN ID); valid only when Tagged.
func (f Frame) VLANTCI() uint16 { return binary.BigEndian.Uint16(f[14:16]) }

// EtherType returns the EtherType of the payload, past one VLAN tag if
// there is one.
func (f Frame) EtherType() EtherType {
	if f.Tagged() {
		return EtherType(binary.BigEndian.Uint16(f[16:18]))
	}
	return f.rawType()
}

// HeaderLen returns the header length: 14, or 18 with a VLAN tag.
func (f Frame) HeaderLen() int {
	if f.Tagged() {
		return HeaderLen + VLANTagLen
	}
	return HeaderLen
}

// Payload returns the bytes after the header (padding included: the
// network layer trims to its own length field).
func (f Frame) Payload() []byte { return f[f.HeaderLen():] }

// SetDst writes the destination address.
func (f Frame) SetDst(a Addr) { copy(f[0:6], a[:]) }

// SetSrc writes the source address.
func (f Frame) SetSrc(a Addr) { copy(f[6:12], a[:]) }

// SwapAddrs exchanges the destination and source addresses in place, as
// a reflector does (DPDK testpmd's macswap forwarding mode).
func (f Frame) SwapAddrs() {
	var dst Addr
	copy(dst[:], f[0:6])
	copy(f[0:6], f[6:12])
	copy(f[6:12], dst[:])
}

// SetEtherType writes the type field of an untagged frame.
func (f Frame) SetEtherType(t EtherType) { binary.BigEndian.PutUint16(f[12:14], uint16(t)) }

// Repr is the parsed form of an Ethernet II header.
type Repr struct {
	Dst, Src  Addr
	EtherType EtherType
	// Tagged says an 802.1Q tag was present; VLANTCI is its TCI.
	Tagged  bool
	VLANTCI uint16
}

// Parse validates f and returns its header. It rejects frames shorter
// than their header, 802.3 length-field frames and stacked tags.
func Parse(f Frame) (Repr, error) {
	if _, err := Check(f); err != nil {
		return Repr{}, err
	}
	r := Repr{Dst: f.Dst(), Src: f.Src(), EtherType: f.EtherType(), Tagged: f.Tagged()}
	if r.Tagged {
		r.VLANTCI = f.VLANTCI()
	}
	if r.EtherType == TypeVLAN || r.EtherType == TypeQinQ || f.rawType() == TypeQinQ {
		return Repr{}, ErrStackedVLAN
	}
	if r.EtherType < minEtherType {
		return Repr{}, ErrLengthField
	}
	return r, nil
}

// HeaderLen returns the header length r emits.
func (r Repr) HeaderLen() int {
	if r.Tagged {
		return HeaderLen + VLANTagLen
	}
	return HeaderLen
}

// Emit writes r's header into the first HeaderLen() bytes of f, which
// must be long enough.
func (r Repr) Emit(f Frame) {
	f.SetDst(r.Dst)
	f.SetSrc(r.Src)
	if r.Tagged {
		binary.BigEndian.PutUint16(f[12:14], uint16(TypeVLAN))
		binary.BigEndian.PutUint16(f[14:16], r.VLANTCI)
		binary.BigEndian.PutUint16(f[16:18], uint16(r.EtherType))
		return
	}
	f.SetEtherType(r.EtherType)
}
