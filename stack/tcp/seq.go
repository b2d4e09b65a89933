package tcp

// Seq is a TCP sequence number. Comparisons are modulo 2^32 as RFC 9293
// section 3.4 requires: a is "less than" b when the signed distance from a
// to b is positive, which is valid while the two are less than 2^31 apart.
type Seq uint32

// LessThan reports whether s comes before t in sequence space.
func (s Seq) LessThan(t Seq) bool { return int32(s-t) < 0 }

// LessEq reports whether s comes before or equals t.
func (s Seq) LessEq(t Seq) bool { return int32(s-t) <= 0 }

// GreaterThan reports whether s comes after t.
func (s Seq) GreaterThan(t Seq) bool { return int32(s-t) > 0 }

// GreaterEq reports whether s comes after or equals t.
func (s Seq) GreaterEq(t Seq) bool { return int32(s-t) >= 0 }

// Add returns s advanced by n octets.
func (s Seq) Add(n int) Seq { return s + Seq(uint32(n)) }

// Sub returns the number of octets from t to s (s - t), assuming t <= s.
func (s Seq) Sub(t Seq) int { return int(int32(s - t)) }

// InWindow reports whether s lies in [start, start+size).
func (s Seq) InWindow(start Seq, size int) bool {
	return start.LessEq(s) && s.LessThan(start.Add(size))
}

func seqMax(a, b Seq) Seq {
	if a.GreaterThan(b) {
		return a
	}
	return b
}

func seqMin(a, b Seq) Seq {
	if a.LessThan(b) {
		return a
	}
	return b
}
