package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/savanna-sim/savanna/stack/checksum"
)

// Wire format of the TCP header, RFC 9293 section 3.1.
const (
	// HeaderLen is the length of a TCP header without options.
	HeaderLen = 20
	// MaxHeaderLen is the longest header the data offset can express.
	MaxHeaderLen = 60
	// MaxOptionsLen is the room left for options.
	MaxOptionsLen = MaxHeaderLen - HeaderLen
	// ProtocolNumber is TCP's protocol number (IPv4's protocol field,
	// IPv6's next header), for the network layer's pseudo-header.
	ProtocolNumber = 6
)

// Flags are the TCP control bits (RFC 9293 section 3.1; CWR/ECE from
// RFC 3168, carried but not acted on).
type Flags uint8

// The control bits.
const (
	FlagFIN Flags = 1 << iota
	FlagSYN
	FlagRST
	FlagPSH
	FlagACK
	FlagURG
	FlagECE
	FlagCWR
)

// String renders flags tcpdump-style, e.g. "SA" or "FPA".
func (f Flags) String() string {
	const names = "FSRPAUEC"
	var b []byte
	for i := 0; i < 8; i++ {
		if f&(1<<i) != 0 {
			b = append(b, names[i])
		}
	}
	if len(b) == 0 {
		return "."
	}
	return string(b)
}

// Option kinds, RFC 9293 section 3.2, RFC 7323, RFC 2018.
const (
	optEOL       = 0
	optNOP       = 1
	optMSS       = 2
	optWScale    = 3
	optSACKPerm  = 4
	optSACK      = 5
	optTimestamp = 8
)

// Parse errors. Each is wrapped with the offending field by Parse.
var (
	ErrTruncated     = errors.New("tcp: segment shorter than its header")
	ErrBadDataOffset = errors.New("tcp: bad data offset")
	ErrBadOption     = errors.New("tcp: malformed option")
)

// Header is a zero-copy view of a TCP header at the start of a segment.
// Its accessors assume the segment is at least HeaderLen long; use Parse
// to validate untrusted bytes.
type Header []byte

// SrcPort returns the source port.
func (h Header) SrcPort() uint16 { return binary.BigEndian.Uint16(h[0:]) }

// DstPort returns the destination port.
func (h Header) DstPort() uint16 { return binary.BigEndian.Uint16(h[2:]) }

// SeqNum returns the sequence number.
func (h Header) SeqNum() Seq { return Seq(binary.BigEndian.Uint32(h[4:])) }

// AckNum returns the acknowledgment number.
func (h Header) AckNum() Seq { return Seq(binary.BigEndian.Uint32(h[8:])) }

// DataOffset returns the header length in bytes.
func (h Header) DataOffset() int { return int(h[12]>>4) * 4 }

// Flags returns the control bits.
func (h Header) Flags() Flags { return Flags(h[13]) }

// Window returns the raw (unscaled) window field.
func (h Header) Window() uint16 { return binary.BigEndian.Uint16(h[14:]) }

// SACKBlock is one block of a SACK option (RFC 2018 section 3): the
// octets [Start, End) have been received.
type SACKBlock struct {
	Start, End Seq
}

// MaxSACKBlocks is how many SACK blocks fit in 40 option bytes
// (RFC 2018 section 3); with timestamps only 3 fit.
const MaxSACKBlocks = 4

// Repr is the parsed form of a TCP segment: header fields, the options the
// engine understands and the payload (a view into the parsed bytes).
type Repr struct {
	SrcPort, DstPort uint16
	Seq, Ack         Seq
	Flags            Flags
	Window           uint16
	Urgent           uint16

	// MSS is the Maximum Segment Size option (RFC 9293 section 3.7.1),
	// 0 when absent.
	MSS uint16
	// HasWScale and WScale: the Window Scale option (RFC 7323 section 2).
	HasWScale bool
	WScale    uint8
	// SACKPermitted: the SACK-Permitted option (RFC 2018 section 2).
	SACKPermitted bool
	// HasTS, TSVal, TSEcr: the Timestamps option (RFC 7323 section 3).
	HasTS        bool
	TSVal, TSEcr uint32
	// SACK holds NumSACK blocks of a SACK option (RFC 2018 section 3).
	SACK    [MaxSACKBlocks]SACKBlock
	NumSACK int

	// Payload is the segment's data; on Parse it aliases the input.
	Payload []byte
}

// SegLen is the segment's length in sequence space (RFC 9293 section
// 3.4): its data plus one for SYN and one for FIN.
func (r *Repr) SegLen() int {
	n := len(r.Payload)
	if r.Flags&FlagSYN != 0 {
		n++
	}
	if r.Flags&FlagFIN != 0 {
		n++
	}
	return n
}

// Parse validates seg (TCP header, options and payload) and returns its
// representation. It does not check the checksum (see VerifyChecksum).
// Malformed options make the whole segment invalid: a length byte below
// 2, an option running past the header, or a known option of the wrong
// length (RFC 9293 section 3.2 lets a receiver drop such segments;
// ignoring one could desynchronise option parsing).
func Parse(seg []byte) (Repr, error) {
	var r Repr
	if len(seg) < HeaderLen {
		return r, fmt.Errorf("parse: %d bytes: %w", len(seg), ErrTruncated)
	}
	h := Header(seg)
	off := h.DataOffset()
	if off < HeaderLen || off > len(seg) {
		return r, fmt.Errorf("parse: data offset %d, segment %d bytes: %w", off, len(seg), ErrBadDataOffset)
	}
	r.SrcPort = h.SrcPort()
	r.DstPort = h.DstPort()
	r.Seq = h.SeqNum()
	r.Ack = h.AckNum()
	r.Flags = h.Flags()
	r.Window = h.Window()
	r.Urgent = binary.BigEndian.Uint16(seg[18:])
	if err := r.parseOptions(seg[HeaderLen:off]); err != nil {
		return r, err
	}
	r.Payload = seg[off:]
	return r, nil
}

func (r *Repr) parseOptions(opts []byte) error {
	for i := 0; i < len(opts); {
		kind := opts[i]
		switch kind {
		case optEOL:
			return nil
		case optNOP:
			i++
			continue
		}
		if i+1 >= len(opts) {
			return fmt.Errorf("parse: option %d at %d has no length: %w", kind, i, ErrBadOption)
		}
		l := int(opts[i+1])
		if l < 2 || i+l > len(opts) {
			return fmt.Errorf("parse: option %d at %d length %d: %w", kind, i, l, ErrBadOption)
		}
		body := opts[i+2 : i+l]
		switch kind {
		case optMSS:
			if l != 4 {
				return fmt.Errorf("parse: MSS option length %d: %w", l, ErrBadOption)
			}
			r.MSS = binary.BigEndian.Uint16(body)
		case optWScale:
			if l != 3 {
				return fmt.Errorf("parse: window scale option length %d: %w", l, ErrBadOption)
			}
			r.HasWScale = true
			r.WScale = body[0]
		case optSACKPerm:
			if l != 2 {
				return fmt.Errorf("parse: SACK-permitted option length %d: %w", l, ErrBadOption)
			}
			r.SACKPermitted = true
		case optSACK:
			if (l-2)%8 != 0 || l == 2 {
				return fmt.Errorf("parse: SACK option length %d: %w", l, ErrBadOption)
			}
			n := (l - 2) / 8
			if n > MaxSACKBlocks {
				n = MaxSACKBlocks
			}
			for j := 0; j < n; j++ {
				r.SACK[j] = SACKBlock{
					Start: Seq(binary.BigEndian.Uint32(body[j*8:])),
					End:   Seq(binary.BigEndian.Uint32(body[j*8+4:])),
				}
			}
			r.NumSACK = n
		case optTimestamp:
			if l != 10 {
				return fmt.Errorf("parse: timestamps option length %d: %w", l, ErrBadOption)
			}
			r.HasTS = true
			r.TSVal = binary.BigEndian.Uint32(body)
			r.TSEcr = binary.BigEndian.Uint32(body[4:])
		default:
			// Unknown options are skipped using their length
			// (RFC 9293 section 3.2).
		}
		i += l
	}
	return nil
}

// OptionsLen returns the length of the options Emit writes, padded to a
// multiple of 4.
func (r *Repr) OptionsLen() int {
	n := 0
	if r.MSS != 0 {
		n += 4
	}
	if r.HasWScale {
		n += 4 // NOP + 3
	}
	if r.HasTS {
		n += 12 // NOP NOP TS, or SACK-permitted + TS
	} else if r.SACKPermitted {
		n += 4 // NOP NOP SACK-permitted
	}
	if r.NumSACK > 0 {
		n += 4 + 8*r.NumSACK
	}
	return n
}

// HeaderLen returns the header length Emit writes.
func (r *Repr) HeaderLen() int { return HeaderLen + r.OptionsLen() }

// Emit writes the header and options into b (which must hold HeaderLen()
// bytes), leaving the checksum zero. It returns the header length. The
// caller puts the payload after it and calls SetChecksum. Option layout
// follows the common Linux order so that captures look familiar.
func (r *Repr) Emit(b []byte) int {
	hl := r.HeaderLen()
	binary.BigEndian.PutUint16(b[0:], r.SrcPort)
	binary.BigEndian.PutUint16(b[2:], r.DstPort)
	binary.BigEndian.PutUint32(b[4:], uint32(r.Seq))
	binary.BigEndian.PutUint32(b[8:], uint32(r.Ack))
	b[12] = byte(hl/4) << 4
	b[13] = byte(r.Flags)
	binary.BigEndian.PutUint16(b[14:], r.Window)
	b[16], b[17] = 0, 0
	binary.BigEndian.PutUint16(b[18:], r.Urgent)
	i := HeaderLen
	if r.MSS != 0 {
		b[i], b[i+1] = optMSS, 4
		binary.BigEndian.PutUint16(b[i+2:], r.MSS)
		i += 4
	}
	if r.HasTS {
		if r.SACKPermitted {
			b[i], b[i+1] = optSACKPerm, 2
		} else {
			b[i], b[i+1] = optNOP, optNOP
		}
		b[i+2], b[i+3] = optTimestamp, 10
		binary.BigEndian.PutUint32(b[i+4:], r.TSVal)
		binary.BigEndian.PutUint32(b[i+8:], r.TSEcr)
		i += 12
	} else if r.SACKPermitted {
		b[i], b[i+1], b[i+2], b[i+3] = optNOP, optNOP, optSACKPerm, 2
		i += 4
	}
	if r.HasWScale {
		b[i], b[i+1], b[i+2], b[i+3] = optNOP, optWScale, 3, r.WScale
		i += 4
	}
	if r.NumSACK > 0 {
		b[i], b[i+1], b[i+2], b[i+3] = optNOP, optNOP, optSACK, byte(2+8*r.NumSACK)
		i += 4
		for j := 0; j < r.NumSACK; j++ {
			binary.BigEndian.PutUint32(b[i:], uint32(r.SACK[j].Start))
			binary.BigEndian.PutUint32(b[i+4:], uint32(r.SACK[j].End))
			i += 8
		}
	}
	return hl
}

// SetChecksum computes the checksum of seg (header with a zero checksum
// field, plus payload) under the pseudo-header whose sum is pseudo (the
// Network's PseudoHeaderSum for seg, RFC 9293 section 3.1) and stores it.
func SetChecksum(seg []byte, pseudo uint64) {
	seg[16], seg[17] = 0, 0
	binary.BigEndian.PutUint16(seg[16:], checksum.Finish(checksum.Add(pseudo, seg)))
}

// SetPseudoChecksum stores only the folded pseudo-header sum, as a NIC
// with TCP checksum offload expects (DPDK's RTE_MBUF_F_TX_TCP_CKSUM).
func SetPseudoChecksum(seg []byte, pseudo uint64) {
	binary.BigEndian.PutUint16(seg[16:], checksum.Fold(pseudo))
}

// VerifyChecksum reports whether seg's checksum is correct under the
// pseudo-header whose sum is pseudo: the sum over pseudo-header and
// segment folds to 0xffff.
func VerifyChecksum(seg []byte, pseudo uint64) bool {
	return checksum.Fold(checksum.Add(pseudo, seg)) == 0xffff
}
