package ipv6

import (
	"fmt"
	"time"
)

// ProtoSet is a set of upper-layer protocols (Next Header values) that
// have a handler. The zero value is empty.
type ProtoSet [4]uint64

// Add returns s with proto in it.
func (s ProtoSet) Add(proto uint8) ProtoSet {
	s[proto>>6] |= 1 << (proto & 63)
	return s
}

// Has reports whether proto is in s.
func (s ProtoSet) Has(proto uint8) bool { return s[proto>>6]&(1<<(proto&63)) != 0 }

// ReceiverConfig configures input processing.
type ReceiverConfig struct {
	// Protocols are the upper layers delivered; a packet for any other
	// gets Parameter Problem code 1 (RFC 8200 section 4). Empty means
	// TCP, UDP and ICMPv6.
	Protocols ProtoSet
	// MaxOptions bounds the non-padding options of one hop-by-hop or
	// destination options header (default 8, Linux's
	// net.ipv6.max_hbh_opts_number and max_dst_opts_number).
	MaxOptions int `yaml:"max_options"`
	// Reasm bounds fragment reassembly.
	Reasm ReasmConfig `yaml:"reassembly"`
}

// Action is what the caller does with a packet after Input.
type Action uint8

// Actions.
const (
	// Drop: the packet was dropped (Result.Err says why, Result.ICMP what
	// error is due, if any).
	Drop Action = iota + 1
	// Deliver: hand Result.Payload to the upper layer Result.Proto.
	Deliver
	// Held: a fragment was kept for reassembly; nothing to do yet.
	Held
)

// Result is the outcome of Input.
type Result struct {
	Action Action
	// Err is the reason for a drop (ErrNoNextHeader for a packet that was
	// consumed by next header 59).
	Err Error
	// ICMP is the error due about a dropped packet; Type zero if none.
	// Its pointer is an offset into Packet.
	ICMP ICMPError
	// Packet is the packet processed: the input trimmed to its payload
	// length, or the reassembled packet, which is valid until the next
	// call on the Receiver. It is the invoking packet an ICMPv6 error
	// quotes. Nil when the input was too short to be a packet.
	Packet Packet
	// Proto is the upper-layer protocol and Offset the start of its header
	// in Packet, when delivered.
	Proto  uint8
	Offset int
	// ProtoPointer is the offset of the Next Header field that named
	// Proto: the pointer of Parameter Problem code 1.
	ProtoPointer int
	// Reassembled says Packet was put together from fragments.
	Reassembled bool
}

// Payload returns the upper-layer header and data of a delivered packet.
func (r Result) Payload() []byte { return r.Packet[r.Offset:] }

// Receiver processes IPv6 input for a host (RFC 8200): the fixed header,
// the extension header chain, options, routing headers, fragments and
// their reassembly. It does no I/O: Input says what to deliver and which
// ICMPv6 error is due, Poll what timed out.
type Receiver struct {
	cfg   ReceiverConfig
	reasm *Reassembler
	stats *Stats
}

// NewReceiver returns a receiver counting into stats (nil for private
// counters).
func NewReceiver(cfg ReceiverConfig, stats *Stats) (*Receiver, error) {
	if stats == nil {
		stats = &Stats{}
	}
	if cfg.Protocols == (ProtoSet{}) {
		cfg.Protocols = cfg.Protocols.Add(NextTCP).Add(NextUDP).Add(NextICMPv6)
	}
	if cfg.MaxOptions < 0 || cfg.MaxOptions > 255 {
		return nil, fmt.Errorf("max_options: %d is outside 1..255", cfg.MaxOptions)
	}
	if cfg.MaxOptions == 0 {
		cfg.MaxOptions = 8
	}
	ra, err := NewReassembler(cfg.Reasm, stats)
	if err != nil {
		return nil, err
	}
	cfg.Reasm = ra.Config()
	return &Receiver{cfg: cfg, reasm: ra, stats: stats}, nil
}

// Config returns the effective configuration.
func (rc *Receiver) Config() ReceiverConfig { return rc.cfg }

// Stats returns the counters.
func (rc *Receiver) Stats() *Stats { return rc.stats }

// Reassembler returns the reassembler, for its gauges.
func (rc *Receiver) Reassembler() *Reassembler { return rc.reasm }

// Poll runs the reassembly timers (see Reassembler.Poll).
func (rc *Receiver) Poll(now time.Duration, sink ReasmSink) time.Duration {
	return rc.reasm.Poll(now, sink)
}

// Input processes one received packet b (from its IPv6 header; the
// caller has checked that the destination is one of its addresses or
// groups). Every outcome is counted. The caller keeps ownership of b;
// Result.Packet is a view into b unless Reassembled.
func (rc *Receiver) Input(now time.Duration, b []byte) Result {
	rc.stats.InReceives++
	p, err := checkInput(b)
	if err != 0 {
		return rc.drop(Result{Packet: p}, err, ICMPError{})
	}
	if p.Dst().IsMulticast() {
		rc.stats.InMcastPkts++
	}
	if p.Src().IsMulticast() {
		return rc.drop(Result{Packet: p}, ErrSrcMulticast, ICMPError{})
	}
	if nh := p.NextHeader(); !isExtHeader(nh) && nh != NextNone && rc.cfg.Protocols.Has(nh) {
		// No extension header, the common case: walk's first step
		// would deliver at once (as Linux's ip6_protocol_deliver_rcu
		// is reached straight from ip6_rcv_finish), without its loop.
		rc.stats.InDelivers++
		return Result{Action: Deliver, Packet: p, Proto: nh, Offset: HeaderLen, ProtoPointer: OffNextHeader}
	}
	return rc.walk(now, p, p.NextHeader(), HeaderLen, OffNextHeader, false)
}

// checkInput is Check without its error interface: the fixed header's
// length, version and payload length.
func checkInput(b []byte) (Packet, Error) {
	if len(b) < HeaderLen {
		return nil, ErrShort
	}
	p := Packet(b)
	if p.Version() != 6 {
		return p, ErrVersion
	}
	n := HeaderLen + int(p.PayloadLen())
	if n > len(b) {
		return p, ErrTruncated
	}
	return p[:n], 0
}

// walk processes the chain of p from the header nh at off, named by the
// Next Header field at nhOff (RFC 8200 section 4: in the order they
// occur, each header telling what follows).
func (rc *Receiver) walk(now time.Duration, p Packet, nh uint8, off, nhOff int, reassembled bool) Result {
	res := Result{Packet: p, Reassembled: reassembled}
	seenFrag := reassembled
	// A reassembled packet resumes after its unfragmentable part, so its
	// next header is never the first, even where no header precedes the
	// fragment header.
	first := !reassembled
	for ; ; first = false {
		switch nh {
		case NextHopByHop, NextDestOpts:
			if nh == NextHopByHop && !first {
				// RFC 8200 section 4.1: hop-by-hop only right after the
				// fixed header; section 4 treats it as an unrecognised
				// Next Header anywhere else.
				return rc.drop(res, ErrHopByHopNotFirst, paramProblem(CodeUnknownNextHeader, nhOff))
			}
			n := extLen(p, off, nh)
			if n < 0 {
				return rc.drop(res, ErrExtTruncated, ICMPError{})
			}
			if e, ie := processOptions(p, off, n, nh == NextHopByHop, rc.cfg.MaxOptions); e != 0 {
				return rc.drop(res, e, ie)
			}
			nh, nhOff, off = p[off], off, off+n
		case NextRouting:
			n := extLen(p, off, nh)
			if n < 0 || n < 4 {
				return rc.drop(res, ErrExtTruncated, ICMPError{})
			}
			// A host processes no routing type (RFC 5095 section 3
			// treats type 0 as unrecognised; types 2 to 4 are for mobile
			// nodes, RPL and segment routing nodes). Segments left 0:
			// ignore the header; otherwise Parameter Problem code 0 at
			// the routing type (RFC 8200 section 4.4).
			if p[off+3] != 0 {
				return rc.drop(res, ErrRoutingType, paramProblem(CodeErroneousHeader, off+2))
			}
			nh, nhOff, off = p[off], off, off+n
		case NextFragment:
			if extLen(p, off, nh) < 0 {
				return rc.drop(res, ErrExtTruncated, ICMPError{})
			}
			if seenFrag {
				return rc.drop(res, ErrNestedFragment, ICMPError{})
			}
			seenFrag = true
			f := parseFragHeader(p, off, nhOff)
			if f.IsAtomic() {
				// RFC 6946 section 4: an atomic fragment is processed
				// in isolation, never mixed with a reassembly.
				rc.stats.InAtomicFragments++
				nh, nhOff, off = f.NextHeader, off, off+FragHeaderLen
				continue // first is false from here: a header follows the fragment header
			}
			return rc.fragment(now, p, f)
		case NextNone:
			return rc.drop(res, ErrNoNextHeader, ICMPError{})
		default:
			if !rc.cfg.Protocols.Has(nh) {
				return rc.drop(res, ErrUnknownNextHeader, paramProblem(CodeUnknownNextHeader, nhOff))
			}
			rc.stats.InDelivers++
			res.Action, res.Proto, res.Offset, res.ProtoPointer = Deliver, nh, off, nhOff
			return res
		}
	}
}

// fragment checks a fragment (RFC 8200 section 4.5, RFC 7112) and hands it
// to the reassembler; a completed packet's chain is walked on from the
// fragmentable part of its first fragment.
func (rc *Receiver) fragment(now time.Duration, p Packet, f FragHeader) Result {
	res := Result{Packet: p}
	n := len(p) - f.DataOff()
	if f.More && n%8 != 0 {
		return rc.drop(res, ErrFragLength, paramProblem(CodeErroneousHeader, OffPayloadLen))
	}
	if f.HeaderOff-HeaderLen+f.Offset+n > MaxPayloadLen {
		return rc.drop(res, ErrFragTooLong, paramProblem(CodeErroneousHeader, f.HeaderOff+2))
	}
	if n == 0 {
		return rc.drop(res, ErrFragEmpty, ICMPError{})
	}
	if f.Offset == 0 && !chainComplete(p, f.DataOff(), f.NextHeader) {
		return rc.drop(res, ErrIncompleteChain, paramProblem(CodeIncompleteChain, 0))
	}
	whole, first, err := rc.reasm.Input(now, p, f)
	if err != nil {
		// Counted by the reassembler.
		return Result{Action: Drop, Err: err.(Error), Packet: p}
	}
	if whole == nil {
		return Result{Action: Held, Packet: p}
	}
	return rc.walk(now, whole, first.NextHeader, first.HeaderOff, first.NextHeaderOff, true)
}

// chainComplete reports whether a first fragment holds its header chain
// through the upper-layer header, starting at the header nh at off (RFC
// 7112 section 5).
func chainComplete(p Packet, off int, nh uint8) bool {
	for isExtHeader(nh) {
		if nh == NextFragment {
			// A second fragment header is refused after reassembly;
			// its presence is complete enough here.
			return off+FragHeaderLen <= len(p)
		}
		n := extLen(p, off, nh)
		if n < 0 {
			return false
		}
		nh, off = p[off], off+n
	}
	return off+upperLayerMin(nh) <= len(p)
}

func (rc *Receiver) drop(res Result, e Error, ie ICMPError) Result {
	rc.stats.CountError(e)
	res.Action, res.Err, res.ICMP = Drop, e, ie
	return res
}
