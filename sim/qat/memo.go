package qat

import "crypto/sha256"

// The device model compresses the bytes it is given, and a simulation
// offers it the same page bodies again and again: real DEFLATE was 25 to
// 78% of the QAT scenarios' CPU time. A stateless op's output is a pure
// function of (encoder, level, window, final flag, input): the writer is
// reset before every op, so no history crosses ops. deflateMemo keeps the
// outputs of recent ops under that key, so a repeat copies bytes instead
// of compressing them again. The bytes are those compression produces, so
// reports do not change.

// Bounds of one device's memo: the outputs held are at most memoMaxBytes
// in all (plus about 64 bytes of key per entry) and at most memoMaxEntries;
// the oldest entries go first. Outputs larger than memoMaxOutput are not
// kept (one would evict too much).
const (
	memoMaxBytes   = 4 << 20
	memoMaxEntries = 1024
	memoMaxOutput  = 256 << 10
)

// memoKey names one stateless compression: the encoder's settings, the
// input's length and its SHA-256.
type memoKey struct {
	level  int
	window int
	final  bool
	n      int
	sum    [sha256.Size]byte
}

// deflateMemo is a bounded, first-in-first-out memo of compression
// outputs. Its eviction order depends only on the ops it has seen, so it
// is as deterministic as the run.
type deflateMemo struct {
	entries map[memoKey][]byte
	order   []memoKey // insertion order, oldest first
	bytes   int
	// hits and misses count lookups (tests read them).
	hits, misses uint64
}

func newDeflateMemo() *deflateMemo {
	return &deflateMemo{entries: make(map[memoKey][]byte)}
}

// key returns the memo key of compressing src with the given settings.
func (m *deflateMemo) key(level, window int, final bool, src []byte) memoKey {
	return memoKey{level: level, window: window, final: final, n: len(src), sum: sha256.Sum256(src)}
}

// get returns the output remembered under k.
func (m *deflateMemo) get(k memoKey) ([]byte, bool) {
	out, ok := m.entries[k]
	if ok {
		m.hits++
	} else {
		m.misses++
	}
	return out, ok
}

// put remembers a copy of out under k, evicting the oldest entries to
// stay within the bounds.
func (m *deflateMemo) put(k memoKey, out []byte) {
	if len(out) > memoMaxOutput {
		return
	}
	if _, ok := m.entries[k]; ok {
		return
	}
	for len(m.order) > 0 && (m.bytes+len(out) > memoMaxBytes || len(m.order) >= memoMaxEntries) {
		old := m.order[0]
		m.order = m.order[1:]
		m.bytes -= len(m.entries[old])
		delete(m.entries, old)
	}
	m.entries[k] = append([]byte(nil), out...)
	m.order = append(m.order, k)
	m.bytes += len(out)
}
