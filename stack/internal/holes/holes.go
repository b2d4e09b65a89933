// Package holes is the bookkeeping IPv4's and IPv6's reassemblers share:
// where one datagram's fragments lie, as RFC 815's hole descriptors, with
// the overlap rule both versions follow (RFC 5722 section 4 for IPv6;
// Linux applies it to IPv4 too): a fragment that overlaps data already
// held is an error, an exact duplicate of a fragment held is not. The
// reassemblers keep their own keys, buffers, limits and timers; this
// package only decides where a fragment goes.
package holes

// hole is an RFC 815 hole descriptor, first and last inclusive.
type hole struct{ first, last int }

// span is a fragment held: [off, off+n).
type span struct{ off, n int }

// Verdict is what a fragment would do to the datagram (Check).
type Verdict uint8

// Verdicts.
const (
	// Fits: the fragment lies inside one hole; Place it.
	Fits Verdict = iota
	// Duplicate: the fragment repeats one already held, byte range for
	// byte range; ignore it.
	Duplicate
	// Overlap: the fragment overlaps data held.
	Overlap
	// Inconsistent: the fragments disagree on where the datagram ends.
	Inconsistent
	// TooMany: the datagram already holds its limit of fragments.
	TooMany
)

// Datagram is one datagram's fragments under reassembly. Its storage is
// made once (New) and reused across Reset.
type Datagram struct {
	holes []hole
	frags []span
	total int // the fragmentable part's length, -1 until the last fragment
	bytes int // data bytes held
}

// New returns an empty datagram that holds up to maxFrags fragments
// without allocating.
func New(maxFrags int) Datagram {
	return Datagram{holes: make([]hole, 0, maxFrags+1), frags: make([]span, 0, maxFrags), total: -1}
}

// Reset empties d for a new datagram whose data may reach up to limit
// bytes (RFC 815's "infinity").
func (d *Datagram) Reset(limit int) {
	d.holes = append(d.holes[:0], hole{0, limit})
	d.frags = d.frags[:0]
	d.total, d.bytes = -1, 0
}

// Check says what the fragment holding data [off, off+n), the last one
// when !more, would do, without changing d; maxFrags is the limit of
// fragments per datagram. When it Fits, hole is what Place needs.
func (d *Datagram) Check(off, n int, more bool, maxFrags int) (v Verdict, hole int) {
	end := off + n
	if !more {
		if d.total >= 0 && d.total != end {
			return Inconsistent, -1
		}
		for _, sp := range d.frags {
			if sp.off+sp.n > end {
				return Inconsistent, -1
			}
		}
	} else if d.total >= 0 && end > d.total {
		return Inconsistent, -1
	}
	lo, hi := off, end-1
	for i, ho := range d.holes {
		if lo > ho.last || hi < ho.first {
			continue
		}
		if lo < ho.first || hi > ho.last {
			return Overlap, -1
		}
		if len(d.frags) >= maxFrags {
			return TooMany, -1
		}
		return Fits, i
	}
	for _, sp := range d.frags {
		if sp.off == off && sp.n == n {
			return Duplicate, -1
		}
	}
	return Overlap, -1
}

// Place records a fragment Check found to fit in hole i (RFC 815 steps
// 4 to 6: the hole is split around it; nothing follows the last
// fragment).
func (d *Datagram) Place(i, off, n int, more bool) {
	lo, hi := off, off+n-1
	ho := d.holes[i]
	d.holes = append(d.holes[:i], d.holes[i+1:]...)
	if lo > ho.first {
		d.holes = append(d.holes, hole{ho.first, lo - 1})
	}
	if hi < ho.last && more {
		d.holes = append(d.holes, hole{hi + 1, ho.last})
	}
	if !more {
		d.total = off + n
		k := 0
		for _, x := range d.holes {
			if x.first < d.total {
				d.holes[k] = x
				k++
			}
		}
		d.holes = d.holes[:k]
	}
	d.frags = append(d.frags, span{off: off, n: n})
	d.bytes += n
}

// Complete reports whether every byte up to the last fragment's end is
// held.
func (d *Datagram) Complete() bool { return d.total >= 0 && len(d.holes) == 0 }

// Total returns the fragmentable part's length, -1 before the last
// fragment arrived.
func (d *Datagram) Total() int { return d.total }

// Bytes returns the data bytes held.
func (d *Datagram) Bytes() int { return d.bytes }

// Fragments returns the number of fragments held.
func (d *Datagram) Fragments() int { return len(d.frags) }

// Forget drops what d holds (a datagram discarded for an overlap keeps
// its slot, empty, until its deadline: RFC 5722 section 4).
func (d *Datagram) Forget() { d.bytes = 0 }
