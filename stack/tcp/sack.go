package tcp

// scoreboard is the data sender's record of SACKed ranges above SND.UNA
// (RFC 6675 section 3 "scoreboard"), sorted and disjoint. It is bounded:
// blocks that would need more than max ranges are ignored, which only
// makes recovery more conservative. Like the assembler it is only its
// slice, allocated at the first SACK block and freed when the cumulative
// ACK passes the last range, the bound coming from the stack.
type scoreboard struct {
	r []seqRange
}

// reset forgets every range and frees the list.
func (s *scoreboard) reset() { s.r = nil }

// add records one SACK block, merging neighbours, keeping at most max
// ranges.
func (s *scoreboard) add(start, end Seq, max int) {
	i := 0
	for i < len(s.r) && s.r[i].end.LessThan(start) {
		i++
	}
	j := i
	for j < len(s.r) && s.r[j].start.LessEq(end) {
		j++
	}
	if i == j {
		if len(s.r) >= max {
			return
		}
		if s.r == nil {
			s.r = make([]seqRange, 0, min(max, firstRanges))
		}
		s.r = append(s.r, seqRange{})
		copy(s.r[i+1:], s.r[i:])
		s.r[i] = seqRange{start: start, end: end}
		return
	}
	s.r[i] = seqRange{start: seqMin(start, s.r[i].start), end: seqMax(end, s.r[j-1].end)}
	s.r = append(s.r[:i+1], s.r[j:]...)
}

// pruneTo drops what the cumulative ACK now covers.
func (s *scoreboard) pruneTo(una Seq) {
	k := 0
	for k < len(s.r) && s.r[k].end.LessEq(una) {
		k++
	}
	if k > 0 {
		s.r = append(s.r[:0], s.r[k:]...)
		if len(s.r) == 0 {
			s.r = nil // recovery is over: the list goes
		}
	}
	if len(s.r) > 0 && s.r[0].start.LessThan(una) {
		s.r[0].start = una
	}
}

// update applies the SACK blocks of an ACK. Blocks are accepted only
// inside (SND.UNA, SND.MAX] (RFC 2018 section 3; RFC 6675 section 5);
// a D-SACK block below SND.UNA is ignored. It returns whether anything
// newly SACKed appeared.
func (s *scoreboard) update(una, sndMax Seq, blocks []SACKBlock, max int) bool {
	before := s.sackedIn(una, sndMax)
	for _, b := range blocks {
		if !b.Start.LessThan(b.End) || b.End.LessEq(una) || b.End.GreaterThan(sndMax) {
			continue
		}
		st := seqMax(b.Start, una)
		s.add(st, b.End, max)
	}
	return s.sackedIn(una, sndMax) != before
}

// sackedIn returns how many octets of [a, b) are SACKed.
func (s *scoreboard) sackedIn(a, b Seq) int {
	n := 0
	for _, r := range s.r {
		st, en := seqMax(r.start, a), seqMin(r.end, b)
		if st.LessThan(en) {
			n += en.Sub(st)
		}
	}
	return n
}

// lostEnd implements RFC 6675's IsLost for all sequence numbers at once:
// a sequence number S is lost when DupThresh discontiguous SACKed ranges
// lie above it, or more than (DupThresh-1)*SMSS SACKed octets do. The
// predicate is monotone, so every unSACKed octet below the returned
// boundary is lost and none above it.
func (s *scoreboard) lostEnd(una Seq, mss int) Seq {
	const dupThresh = 3 // RFC 6675 section 2 DupThresh
	bytes := 0
	for k := len(s.r) - 1; k >= 0; k-- {
		bytes += s.r[k].end.Sub(s.r[k].start)
		if len(s.r)-k >= dupThresh || bytes > (dupThresh-1)*mss {
			return s.r[k].start
		}
	}
	return una
}

// nextHole returns the first unSACKed octet at or after from and the end
// of the hole it starts (the next SACKed range or limit).
func (s *scoreboard) nextHole(from, limit Seq) (Seq, Seq) {
	for _, r := range s.r {
		if r.end.LessEq(from) {
			continue
		}
		if r.start.LessEq(from) {
			from = r.end
			continue
		}
		return from, seqMin(r.start, limit)
	}
	return from, limit
}
