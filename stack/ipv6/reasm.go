package ipv6

import (
	"fmt"
	"math"
	"time"

	"github.com/savanna-sim/savanna/stack/internal/holes"
)

// Never is the deadline Poll returns when no timer is armed.
const Never = time.Duration(math.MaxInt64)

// MaxQuoteLen is the most of an invoking packet an ICMPv6 error carries:
// what fits in the minimum MTU after the IPv6 and ICMPv6 headers (RFC
// 4443 section 2.4 (c)).
const MaxQuoteLen = MinMTU - HeaderLen - 8

// ReasmSink is told about datagrams that timed out after their first
// fragment arrived, so that it can send Time Exceeded code 1 (fragment
// reassembly time exceeded, RFC 8200 section 4.5) to its source.
type ReasmSink interface {
	// ReassemblyTimeout gets the first fragment as it arrived, up to
	// MaxQuoteLen bytes: the invoking packet to quote. The bytes are
	// valid only during the call.
	ReassemblyTimeout(now time.Duration, firstFragment []byte)
}

// headroom is where fragment data starts in a slot's buffer: the first
// fragment's unfragmentable part is copied just before it so that the
// reassembled packet is contiguous. An unfragmentable part longer than
// the minimum MTU cannot have come from a source that fragments for it
// (RFC 8200 section 4.5), and is refused (ErrReasmTooLong).
const headroom = MinMTU

// reasmKey identifies a datagram: source, destination and identification
// (RFC 8200 section 4.5). Unlike IPv4 the upper-layer protocol is not part
// of it: only the first fragment's next header counts.
type reasmKey struct {
	src, dst Addr
	id       uint32
}

type slot struct {
	used bool
	// dead: discarded for an overlap; kept until its deadline so that its
	// later fragments are discarded too (RFC 5722 section 4).
	dead     bool
	key      reasmKey
	deadline time.Duration
	first    FragHeader // of the offset-0 fragment, HeaderOff 0 until it arrives
	frags    holes.Datagram
	buf      []byte
	quote    []byte // the first fragment as it arrived, up to MaxQuoteLen
}

// Reassembler puts fragmented packets back together (RFC 8200 section
// 4.5, with the hole descriptors of RFC 815 and the overlap rule of RFC
// 5722). It copies fragment data into per-slot buffers allocated once and
// reused, so the caller keeps its packet buffers and steady-state
// reassembly does not allocate. It takes fragments already checked by
// Receiver.Input (lengths, the 65535 limit, RFC 7112's header chain);
// atomic fragments never reach it (RFC 6946 section 4).
type Reassembler struct {
	cfg   ReasmConfig
	slots []slot
	bytes int
	next  time.Duration
	stats *Stats
}

// NewReassembler returns a reassembler that counts into stats (the IPv6
// counters of the owning stack instance; nil for private ones).
func NewReassembler(cfg ReasmConfig, stats *Stats) (*Reassembler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ipv6 reassembly config: %w", err)
	}
	if stats == nil {
		stats = &Stats{}
	}
	cfg = cfg.WithDefaults()
	r := &Reassembler{cfg: cfg, slots: make([]slot, cfg.MaxDatagrams), next: Never, stats: stats}
	for i := range r.slots {
		r.slots[i].frags = holes.New(cfg.MaxFragments)
	}
	return r, nil
}

// Config returns the effective configuration.
func (r *Reassembler) Config() ReasmConfig { return r.cfg }

// InProgress returns the number of datagrams held, discarded ones
// waiting for their deadline included.
func (r *Reassembler) InProgress() int {
	n := 0
	for i := range r.slots {
		if r.slots[i].used {
			n++
		}
	}
	return n
}

// BufferedBytes returns the fragment data bytes held.
func (r *Reassembler) BufferedBytes() int { return r.bytes }

// Input takes one fragment: p a checked packet and f its fragment header.
// It returns the whole packet once the last missing fragment arrives,
// valid until the next call on the reassembler: the first fragment's
// unfragmentable part, its last Next Header field rewritten to the first
// fragment's NextHeader and the payload length fixed, then the data;
// first is the first fragment's header, whose DataOff-FragHeaderLen
// (HeaderOff) is where the fragmentable part starts in the result.
// Otherwise it returns nil, with an Error when the fragment was dropped;
// every outcome is counted. The caller keeps ownership of p.
func (r *Reassembler) Input(now time.Duration, p Packet, f FragHeader) (whole Packet, first FragHeader, err error) {
	r.stats.ReasmReqds++
	key := reasmKey{src: p.Src(), dst: p.Dst(), id: f.Ident}
	s := r.find(key)
	if s == nil {
		s = r.open(now, key)
		if s == nil {
			r.stats.CountError(ErrReasmTableFull)
			return nil, FragHeader{}, ErrReasmTableFull
		}
	}
	if s.dead {
		r.stats.CountError(ErrReasmDiscarded)
		return nil, FragHeader{}, ErrReasmDiscarded
	}
	data := p[f.DataOff():]
	n := len(data)
	lo := f.Offset

	// Placement against the holes (RFC 815 steps 1-8). Any overlap with
	// data held discards the datagram (RFC 5722 section 4); an exact
	// duplicate is ignored (RFC 8200 section 4.5 allows it); fragments
	// must agree on where the datagram ends.
	v, hole := s.frags.Check(lo, n, f.More, r.cfg.MaxFragments)
	switch v {
	case holes.Inconsistent:
		return r.fail(s, ErrReasmInconsistent)
	case holes.Overlap:
		return r.kill(s)
	case holes.TooMany:
		return r.fail(s, ErrReasmTooManyFrags)
	case holes.Duplicate:
		r.stats.CountError(ErrReasmDuplicate)
		return nil, FragHeader{}, ErrReasmDuplicate
	}
	if lo == 0 && f.HeaderOff > headroom {
		return r.fail(s, ErrReasmTooLong)
	}
	if r.bytes+n > r.cfg.MaxBytes {
		r.stats.CountError(ErrReasmMemFull)
		if s.frags.Fragments() == 0 {
			r.close(s)
		}
		return nil, FragHeader{}, ErrReasmMemFull
	}

	// Accept: split the hole, copy the bytes.
	s.frags.Place(hole, lo, n, f.More)
	copy(s.buf[headroom+lo:], data)
	r.bytes += n
	if lo == 0 {
		// Only the offset-0 fragment's headers are kept (RFC 8200
		// section 4.5).
		s.first = f
		copy(s.buf[headroom-f.HeaderOff:headroom], p[:f.HeaderOff])
		s.quote = append(s.quote[:0], p[:min(len(p), MaxQuoteLen)]...)
	}
	if !s.frags.Complete() {
		return nil, FragHeader{}, nil
	}

	u, total := s.first.HeaderOff, s.frags.Total()
	if u-HeaderLen+total > MaxPayloadLen {
		return r.fail(s, ErrReasmTooLong)
	}
	d := Packet(s.buf[headroom-u : headroom+total])
	d[s.first.NextHeaderOff] = s.first.NextHeader
	d.SetPayloadLen(uint16(len(d) - HeaderLen))
	first = s.first
	r.stats.ReasmOKs++
	r.close(s)
	return d, first, nil
}

// fail drops datagram s for reason e (counted).
func (r *Reassembler) fail(s *slot, e Error) (Packet, FragHeader, error) {
	r.stats.CountError(e)
	r.close(s)
	return nil, FragHeader{}, e
}

// kill discards datagram s for an overlap and keeps its slot, empty, until
// its deadline (RFC 5722 section 4).
func (r *Reassembler) kill(s *slot) (Packet, FragHeader, error) {
	r.stats.CountError(ErrReasmOverlap)
	r.bytes -= s.frags.Bytes()
	s.frags.Forget()
	s.dead = true
	return nil, FragHeader{}, ErrReasmOverlap
}

func (r *Reassembler) find(k reasmKey) *slot {
	for i := range r.slots {
		if r.slots[i].used && r.slots[i].key == k {
			return &r.slots[i]
		}
	}
	return nil
}

func (r *Reassembler) open(now time.Duration, k reasmKey) *slot {
	for i := range r.slots {
		s := &r.slots[i]
		if s.used {
			continue
		}
		if s.buf == nil {
			// Once per slot for the life of the reassembler.
			s.buf = make([]byte, headroom+MaxPayloadLen)
			s.quote = make([]byte, 0, MaxQuoteLen)
		}
		s.used, s.dead = true, false
		s.key = k
		s.deadline = now + r.cfg.Timeout
		s.first = FragHeader{}
		s.frags.Reset(MaxPayloadLen)
		s.quote = s.quote[:0]
		if s.deadline < r.next {
			r.next = s.deadline
		}
		return s
	}
	return nil
}

func (r *Reassembler) close(s *slot) {
	r.bytes -= s.frags.Bytes()
	s.used, s.dead = false, false
	s.frags.Forget()
}

// Poll gives up on datagrams whose time is over (counted in ReasmTimeout
// and ReasmFails), telling sink about those whose first fragment had
// arrived, frees the slots of discarded ones, and returns the next
// deadline or Never.
func (r *Reassembler) Poll(now time.Duration, sink ReasmSink) time.Duration {
	if now < r.next {
		return r.next
	}
	next := Never
	for i := range r.slots {
		s := &r.slots[i]
		if !s.used {
			continue
		}
		if now < s.deadline {
			next = min(next, s.deadline)
			continue
		}
		if !s.dead {
			r.stats.ReasmTimeout++
			r.stats.ReasmFails++
			if s.first.HeaderOff > 0 {
				r.stats.ReasmTimeoutWithFirst++
				if sink != nil {
					sink.ReassemblyTimeout(now, s.quote)
				}
			}
		}
		r.close(s)
	}
	r.next = next
	return next
}
