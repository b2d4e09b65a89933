package sim

import (
	"math/bits"
	"time"
)

// The queue's geometry: times are split into 6-bit digits, one level of
// 64 buckets per digit, so a level's non-empty buckets fit one word.
const (
	digitBits = 6
	perLevel  = 1 << digitBits
	levels    = (63 + digitBits - 1) / digitBits // times are >= 0: 63 bits

	// Bucket memory (see wheel.grow): buckets grow in powers of two from
	// 1<<minClass events. An emptied bucket keeps its array up to
	// keepLevel0 (level 0) or keepUpper (above) events and hands a larger
	// one to the spares, which hold at most max(pending, spareFloor)
	// events' worth.
	minClass   = 4
	keepLevel0 = 1 << 10
	keepUpper  = 1 << 8
	spareFloor = 1 << 12
)

// wheel is the engine's event queue: a hierarchical timing wheel (Varghese
// and Lauck, "Hashed and hierarchical timing wheels", SOSP 1987) whose
// levels are digits of the time in nanoseconds, read as a radix heap
// (Ahuja, Mehlhorn, Orlin and Tarjan, JACM 1990) so that it needs no
// tick and no fixed horizon. It relies on the engine's times never going
// back: every event pushed is at or after the time of the last event
// popped (last), which holds since At refuses a time before now and
// now >= last.
//
// An event at time t sits at the level of the highest digit in which t
// differs from last, in the bucket of t's digit there. Level 0 therefore
// holds the events that share all but the lowest digit with last, one
// bucket per nanosecond; each level's buckets are in time order, and
// every event of a level is earlier than every event of the levels
// above. The earliest event is in the lowest non-empty bucket of level
// 0, found by one count of trailing zeros. When level 0 is empty, the
// lowest non-empty bucket of the lowest non-empty level is emptied: its
// earliest time becomes last and its events move down around it, each to
// a strictly lower level. So an event scheduled less than 64 ns ahead
// (in the same 64-ns block) never moves, and one scheduled ahead by d
// moves at most log64(d) times.
//
// Order within an instant: each bucket is a FIFO. A push appends the
// newest event; a cascade visits its bucket in order and appends only to
// levels below the lowest non-empty one, which are empty. So in every
// bucket events of the same time are in the order they were scheduled,
// and level 0 pops them in that order: the engine's order is exactly
// (time, scheduling sequence), as a heap keyed on both gives, without
// storing a sequence number. An event for the current instant (a core's
// turn, a doorbell) lands in the bucket being popped: an append and a
// read.
type wheel struct {
	buckets [levels][perLevel][]event
	// mask[l] has bit b set when buckets[l][b] is not empty.
	mask [levels]uint64
	// levelMask has bit l set when mask[l] != 0, for l >= 1.
	levelMask uint64
	// head is how many events of the lowest level-0 bucket have been
	// popped; that bucket is the only one popped from.
	head int
	last time.Duration
	n    int
	// minAt is the earliest time at levels >= 1 when minOK: peek and
	// cascade then need no scan.
	minAt time.Duration
	minOK bool
	// spares[k] are empty arrays of capacity 1<<k, spareCap their sum;
	// spareMask has bit k set when spares[k] is not empty.
	spares    [64][][]event
	spareMask uint64
	spareCap  int
}

// place returns the level and bucket of time t, relative to last.
func (w *wheel) place(t time.Duration) (level, bucket int) {
	x := uint64(t ^ w.last)
	if x < perLevel {
		return 0, int(t) & (perLevel - 1)
	}
	level = (bits.Len64(x) - 1) / digitBits
	return level, int(uint64(t)>>(level*digitBits)) & (perLevel - 1)
}

// add appends ev to bucket (l, b).
func (w *wheel) add(l, b int, ev event) {
	bk := w.buckets[l][b]
	if len(bk) == cap(bk) {
		bk = w.grow(bk)
	}
	w.buckets[l][b] = append(bk, ev)
	w.mask[l] |= 1 << b
}

// grow returns bk moved to an array of twice its capacity, from the
// spares when there is one. A wheel's buckets take turns being large:
// the bucket of the next second fills with every timer due in it while
// the one before has just been emptied. Keeping every bucket's peak
// would hold up to 64 times the queue per level (each bucket of a
// level is first filled in turn); dropping the large ones would make a
// steady state allocate. Passing arrays between buckets does neither.
func (w *wheel) grow(bk []event) []event {
	k := max(bits.Len(uint(cap(bk))), minClass)
	var nb []event
	if fit := w.spareMask >> k << k; fit != 0 {
		// The smallest spare at least twice bk's size: a larger one
		// than needed still serves, and keeps the spares turning over.
		j := bits.TrailingZeros64(fit)
		s := w.spares[j]
		nb = s[len(s)-1]
		s[len(s)-1] = nil
		if w.spares[j] = s[:len(s)-1]; len(s) == 1 {
			w.spareMask &^= 1 << j
		}
		w.spareCap -= cap(nb)
	} else {
		nb = make([]event, 0, 1<<k)
	}
	nb = append(nb, bk...)
	clear(bk)
	w.release(bk)
	return nb
}

// release takes back the cleared array of a bucket that has been
// emptied or moved: it keeps it as a spare if it is a power-of-two
// array and the spares have room, else leaves it to the collector.
func (w *wheel) release(bk []event) {
	c := cap(bk)
	if c < 1<<minClass || c&(c-1) != 0 {
		return
	}
	k := bits.TrailingZeros(uint(c))
	// Over budget, smaller spares make way: a larger array serves any
	// request a smaller one would.
	budget := max(w.n, spareFloor)
	for w.spareCap+c > budget {
		j := bits.TrailingZeros64(w.spareMask)
		if j >= k {
			return
		}
		s := w.spares[j]
		w.spareCap -= cap(s[len(s)-1])
		s[len(s)-1] = nil
		if w.spares[j] = s[:len(s)-1]; len(s) == 1 {
			w.spareMask &^= 1 << j
		}
	}
	w.spares[k] = append(w.spares[k], bk[:0])
	w.spareMask |= 1 << k
	w.spareCap += c
}

// emptied returns what an emptied, cleared bucket keeps: its own array
// when it is small, else nothing, the array going to the spares.
func (w *wheel) emptied(bk []event, keep int) []event {
	if cap(bk) <= keep {
		return bk[:0]
	}
	w.release(bk)
	return nil
}

func (w *wheel) push(ev event) {
	l, b := w.place(ev.at)
	w.add(l, b, ev)
	w.n++
	if l == 0 {
		return
	}
	switch {
	case w.levelMask == 0:
		w.minAt, w.minOK = ev.at, true
	case w.minOK && ev.at < w.minAt:
		w.minAt = ev.at
	}
	w.levelMask |= 1 << l
}

// peek returns the earliest time queued.
func (w *wheel) peek() (time.Duration, bool) {
	if m := w.mask[0]; m != 0 {
		return w.last&^(perLevel-1) | time.Duration(bits.TrailingZeros64(m)), true
	}
	if w.levelMask == 0 {
		return 0, false
	}
	if !w.minOK {
		l := bits.TrailingZeros64(w.levelMask)
		w.minAt, w.minOK = minTime(w.buckets[l][bits.TrailingZeros64(w.mask[l])]), true
	}
	return w.minAt, true
}

// pop removes and returns the earliest event, the first scheduled of
// those at its time.
func (w *wheel) pop() (event, bool) {
	if w.mask[0] == 0 {
		if w.levelMask == 0 {
			return event{}, false
		}
		w.cascade()
	}
	b := bits.TrailingZeros64(w.mask[0])
	bk := w.buckets[0][b]
	ev := bk[w.head]
	bk[w.head] = event{} // drop the handler for the collector
	w.head++
	if w.head == len(bk) {
		w.buckets[0][b], w.head = w.emptied(bk, keepLevel0), 0
		w.mask[0] &^= 1 << b
	}
	w.last = ev.at
	w.n--
	return ev, true
}

// cascade empties the lowest non-empty bucket of the lowest non-empty
// level into the levels below, around its earliest time, which becomes
// last. Level 0 is empty when it runs.
func (w *wheel) cascade() {
	l := bits.TrailingZeros64(w.levelMask)
	b := bits.TrailingZeros64(w.mask[l])
	bk := w.buckets[l][b]
	m := w.minAt
	if !w.minOK {
		m = minTime(bk)
	}
	w.last = m
	// The events that do not land in level 0 land below l, under every
	// other event of levels >= 1, so their earliest time is the new minAt.
	next, found := time.Duration(0), false
	for _, ev := range bk {
		nl, nb := w.place(ev.at)
		w.add(nl, nb, ev)
		if nl != 0 {
			w.levelMask |= 1 << nl
			if !found || ev.at < next {
				next, found = ev.at, true
			}
		}
	}
	clear(bk)
	w.buckets[l][b] = w.emptied(bk, keepUpper)
	if w.mask[l] &^= 1 << b; w.mask[l] == 0 {
		w.levelMask &^= 1 << l
	}
	w.minAt, w.minOK = next, found
}

func minTime(evs []event) time.Duration {
	m := evs[0].at
	for _, ev := range evs[1:] {
		m = min(m, ev.at)
	}
	return m
}
