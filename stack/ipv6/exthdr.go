package ipv6

import "encoding/binary"

// Options the stack recognises (IANA "Destination Options and Hop-by-Hop
// Options"). Recognising one means only that it is skipped without
// applying the unknown-option rule: a host acts on none of them.
const (
	OptPad1             uint8 = 0x00 // RFC 8200 section 4.2
	OptPadN             uint8 = 0x01 // RFC 8200 section 4.2
	OptTunnelEncapLimit uint8 = 0x04 // RFC 2473 section 5.1, destination options
	OptRouterAlert      uint8 = 0x05 // RFC 2711, hop-by-hop; for routers
)

// Option actions: the two high-order bits of an unrecognised option's type
// (RFC 8200 section 4.2).
const (
	optSkip          = 0 // 00: skip over the option
	optDiscard       = 1 // 01: discard the packet silently
	optDiscardICMP   = 2 // 10: discard, Parameter Problem code 2 always
	optDiscardUnicst = 3 // 11: discard, Parameter Problem code 2 unless multicast
)

// FragHeaderLen is the fragment header (RFC 8200 section 4.5).
const FragHeaderLen = 8

// isExtHeader reports whether nh is an extension header this package
// walks. ESP, AH and the other IANA extension headers are upper layers to
// it: a host without them answers Parameter Problem code 1.
func isExtHeader(nh uint8) bool {
	switch nh {
	case NextHopByHop, NextRouting, NextFragment, NextDestOpts:
		return true
	}
	return false
}

// extLen returns the length of the extension header nh at b[off:], or -1
// if it runs past b. Hop-by-hop, routing and destination options headers
// give their length in 8-octet units beyond the first 8 (RFC 8200
// sections 4.3, 4.4, 4.6); the fragment header is 8 bytes.
func extLen(b []byte, off int, nh uint8) int {
	if off+2 > len(b) {
		return -1
	}
	n := FragHeaderLen
	if nh != NextFragment {
		n = (int(b[off+1]) + 1) * 8
	}
	if off+n > len(b) {
		return -1
	}
	return n
}

// processOptions applies RFC 8200 section 4.2 to the options of the
// hop-by-hop or destination options header at p[off:off+n]. It returns
// zero to go on, or the reason to drop with the ICMPv6 error due.
func processOptions(p Packet, off, n int, hopByHop bool, maxOpts int) (Error, ICMPError) {
	i, end := off+2, off+n
	count := 0
	for i < end {
		t := p[i]
		if t == OptPad1 {
			i++
			continue
		}
		if i+2 > end {
			return ErrBadOption, ICMPError{}
		}
		l := int(p[i+1])
		if i+2+l > end {
			return ErrBadOption, ICMPError{}
		}
		if t != OptPadN {
			count++
			if count > maxOpts {
				return ErrTooManyOptions, ICMPError{}
			}
			if !knownOption(t, hopByHop) {
				switch t >> 6 {
				case optSkip:
				case optDiscard:
					return ErrUnknownOption, ICMPError{}
				case optDiscardICMP:
					return ErrUnknownOption, paramProblem(CodeUnknownOption, i)
				case optDiscardUnicst:
					if p.Dst().IsMulticast() {
						return ErrUnknownOption, ICMPError{}
					}
					return ErrUnknownOption, paramProblem(CodeUnknownOption, i)
				}
			}
		}
		i += 2 + l
	}
	return 0, ICMPError{}
}

func knownOption(t uint8, hopByHop bool) bool {
	if hopByHop {
		return t == OptRouterAlert
	}
	return t == OptTunnelEncapLimit
}

// FragHeader is a parsed fragment header and where it sits in its packet.
type FragHeader struct {
	// NextHeader is the type of the first header of the fragmentable
	// part.
	NextHeader uint8
	// Offset is the fragment offset in bytes (a multiple of 8).
	Offset int
	// More is the M flag: more fragments follow.
	More bool
	// Ident is the identification.
	Ident uint32
	// HeaderOff is the offset of the fragment header in the packet: the
	// length of the unfragmentable part, fixed header included.
	HeaderOff int
	// NextHeaderOff is the offset of the Next Header field that names the
	// fragment header, rewritten on reassembly.
	NextHeaderOff int
}

// IsAtomic reports whether f is an atomic fragment: offset 0 and M clear,
// a whole packet with a fragment header (RFC 6946).
func (f FragHeader) IsAtomic() bool { return f.Offset == 0 && !f.More }

// DataOff returns the offset of the fragment's data in its packet.
func (f FragHeader) DataOff() int { return f.HeaderOff + FragHeaderLen }

func parseFragHeader(p []byte, off, nhOff int) FragHeader {
	v := binary.BigEndian.Uint16(p[off+2 : off+4])
	return FragHeader{
		NextHeader:    p[off],
		Offset:        int(v &^ 7),
		More:          v&1 != 0,
		Ident:         binary.BigEndian.Uint32(p[off+4 : off+8]),
		HeaderOff:     off,
		NextHeaderOff: nhOff,
	}
}

// emitFragHeader writes a fragment header at b[0:8].
func emitFragHeader(b []byte, nh uint8, offset int, more bool, id uint32) {
	b[0] = nh
	b[1] = 0
	v := uint16(offset) &^ 7
	if more {
		v |= 1
	}
	binary.BigEndian.PutUint16(b[2:4], v)
	binary.BigEndian.PutUint32(b[4:8], id)
}

// upperLayerMin is how much of an upper-layer header a first fragment
// must hold for its chain to count as complete: the fixed part of TCP,
// UDP and ICMPv6 headers, one byte of anything else (Linux's
// ipv6_frag_thdr_truncated, net/ipv6/reassembly.c, reading RFC 7112
// section 5).
func upperLayerMin(nh uint8) int {
	switch nh {
	case NextTCP:
		return 20
	case NextUDP:
		return 8
	case NextICMPv6:
		return 8
	case NextNone:
		return 0
	}
	return 1
}

// UpperLayer walks the extension header chain of a checked packet p
// without processing it (no options, no limits), as far as the bytes go,
// and returns the upper-layer protocol and the offset of its header. It
// stops at a fragment header of a non-first fragment, whose fragmentable
// part is not there: then ok is false. It serves the rules that look into
// a packet an error is about (RFC 4443 section 2.4 (e)) and those of RFC
// 7112; ok is false too when the chain runs past p.
func UpperLayer(p []byte) (proto uint8, off int, ok bool) {
	if len(p) < HeaderLen {
		return 0, 0, false
	}
	nh, off := p[OffNextHeader], HeaderLen
	for isExtHeader(nh) {
		n := extLen(p, off, nh)
		if n < 0 {
			return nh, off, false
		}
		if nh == NextFragment {
			f := parseFragHeader(p, off, 0)
			if f.Offset != 0 {
				return nh, off, false
			}
		}
		nh, off = p[off], off+n
	}
	return nh, off, true
}
