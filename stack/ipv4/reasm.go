package ipv4

import (
	"fmt"
	"math"
	"time"

	"github.com/savanna-sim/savanna/stack/internal/holes"
)

// Never is the deadline Poll returns when no timer is armed.
const Never = time.Duration(math.MaxInt64)

// ReasmSink is told about datagrams that timed out after their first
// fragment arrived, so that it can send ICMP Time Exceeded, code 1
// (fragment reassembly time exceeded, RFC 792).
type ReasmSink interface {
	// ReassemblyTimeout gets the header of the first fragment followed by
	// up to the first 8 bytes of its payload: what RFC 792 quotes. The
	// bytes are valid only during the call.
	ReassemblyTimeout(now time.Duration, quote []byte)
}

type reasmKey struct {
	src, dst [4]byte
	proto    Protocol
	id       uint16
}

// slot is one datagram under reassembly. buf holds, from offset
// MaxHeaderLen, the payload; the first fragment's header is copied just
// before it so that the finished datagram is contiguous.
type slot struct {
	used     bool
	key      reasmKey
	deadline time.Duration
	hl       int // header length of the first fragment, 0 until it arrives
	firstLen int // payload bytes of fragment 0
	frags    holes.Datagram
	buf      []byte
}

// Reassembler puts fragmented datagrams back together (RFC 791 section
// 3.2, RFC 815). It copies fragment payload into per-slot buffers that are
// allocated once and reused, so the caller keeps ownership of its packet
// buffers and steady-state reassembly does not allocate.
type Reassembler struct {
	cfg   ReasmConfig
	slots []slot
	bytes int
	next  time.Duration
	stats *Stats
}

// NewReassembler returns a reassembler that counts into stats (the IP
// counters of the owning stack instance).
func NewReassembler(cfg ReasmConfig, stats *Stats) (*Reassembler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("reassembly config: %w", err)
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

// InProgress returns the number of datagrams under reassembly.
func (r *Reassembler) InProgress() int {
	n := 0
	for i := range r.slots {
		if r.slots[i].used {
			n++
		}
	}
	return n
}

// BufferedBytes returns the fragment payload bytes held.
func (r *Reassembler) BufferedBytes() int { return r.bytes }

// Input takes one fragment p (already checked by Parse, which gave h).
// It returns the whole datagram once the last missing fragment arrives:
// a contiguous Packet (the first fragment's header, rewritten as an
// unfragmented header with a fresh checksum, then the payload) valid
// until the next call on the reassembler. Otherwise it returns nil, with
// an Error when the fragment was dropped; every outcome is counted in
// the Stats. The caller keeps ownership of p.
func (r *Reassembler) Input(now time.Duration, p Packet, h Repr) (Packet, error) {
	r.stats.ReasmReqds++
	key := reasmKey{src: h.Src, dst: h.Dst, proto: h.Protocol, id: h.Ident}
	s := r.find(key)
	if s == nil {
		s = r.open(now, key)
		if s == nil {
			r.stats.CountError(ErrReasmTableFull)
			return nil, ErrReasmTableFull
		}
	}
	payload := p[h.HeaderLen : h.HeaderLen+h.PayloadLen]
	first := h.FragOffset

	// Placement against the holes (RFC 815 steps 1-8), rejecting any
	// overlap with data held (RFC 5722 spirit) and fragments that
	// disagree on where the datagram ends.
	v, hole := s.frags.Check(first, h.PayloadLen, h.MoreFrags, r.cfg.MaxFragments)
	switch v {
	case holes.Inconsistent:
		return r.fail(s, ErrReasmInconsistent)
	case holes.Overlap:
		return r.fail(s, ErrReasmOverlap)
	case holes.TooMany:
		return r.fail(s, ErrReasmTooManyFrags)
	case holes.Duplicate:
		r.stats.CountError(ErrReasmDuplicate)
		return nil, ErrReasmDuplicate
	}
	if r.bytes+h.PayloadLen > r.cfg.MaxBytes {
		r.stats.CountError(ErrReasmMemFull)
		if s.frags.Fragments() == 0 {
			r.close(s)
		}
		return nil, ErrReasmMemFull
	}

	// Accept: split the hole, copy the bytes.
	s.frags.Place(hole, first, h.PayloadLen, h.MoreFrags)
	copy(s.buf[MaxHeaderLen+first:], payload)
	r.bytes += h.PayloadLen
	if first == 0 {
		s.hl = h.HeaderLen
		s.firstLen = h.PayloadLen
		copy(s.buf[MaxHeaderLen-h.HeaderLen:MaxHeaderLen], p[:h.HeaderLen])
	}
	if !s.frags.Complete() {
		return nil, nil
	}
	total := s.frags.Total()

	// Complete (RFC 791: the first fragment's header becomes the
	// datagram's header).
	if s.hl+total > MaxDatagramLen {
		return r.fail(s, ErrReasmInconsistent)
	}
	d := Packet(s.buf[MaxHeaderLen-s.hl : MaxHeaderLen+total])
	d.SetTotalLen(uint16(s.hl + total))
	d.SetFrag(false, false, 0)
	d.FillChecksum()
	r.stats.ReasmOKs++
	r.close(s)
	return d, nil
}

// fail drops datagram s for reason e (counted).
func (r *Reassembler) fail(s *slot, e Error) (Packet, error) {
	r.stats.CountError(e)
	r.close(s)
	return nil, e
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
			s.buf = make([]byte, MaxHeaderLen+MaxDatagramLen)
		}
		s.used = true
		s.key = k
		s.deadline = now + r.cfg.Timeout
		s.hl, s.firstLen = 0, 0
		s.frags.Reset(MaxDatagramLen)
		if s.deadline < r.next {
			r.next = s.deadline
		}
		return s
	}
	return nil
}

func (r *Reassembler) close(s *slot) {
	r.bytes -= s.frags.Bytes()
	s.used = false
	s.frags.Forget()
}

// Poll gives up on datagrams whose time is over (counted in ReasmTimeout
// and ReasmFails), telling sink about those whose first fragment had
// arrived, and returns the next deadline or Never.
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
		r.stats.ReasmTimeout++
		r.stats.ReasmFails++
		if s.hl > 0 && sink != nil {
			r.stats.ReasmTimeoutWithFirst++
			sink.ReassemblyTimeout(now, s.buf[MaxHeaderLen-s.hl:MaxHeaderLen+min(8, s.firstLen)])
		}
		r.close(s)
	}
	r.next = next
	return next
}
