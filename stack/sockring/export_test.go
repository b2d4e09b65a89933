package sockring

// The drivers embed their rings and pipes by value (Pipe.Init); the specs
// make free-standing ones.

// NewRing returns an empty ring that grows up to max bytes (a power of
// two). hand publishes its writes; nil publishes them at once.
func NewRing(max int, hand Handoff) *Ring {
	r := &Ring{max: int32(max)}
	r.setHandoff(hand)
	return r
}

// New returns a pipe with empty rings.
func New(cfg Config, drv Driver) *Pipe {
	p := &Pipe{}
	p.Init(cfg, drv)
	return p
}

// NewStoredRing returns an empty ring that borrows its storage from st,
// its consumer giving it back.
func NewStoredRing(max int, st *Storage) *Ring {
	return &Ring{max: int32(max), storage: st, guarded: true}
}

// ReleaseDrained gives the storage of a drained ring back, as its
// consumer or its producer.
func (r *Ring) ReleaseDrained(consumer bool) { r.releaseDrained(consumer) }

// HasStorage reports whether the ring holds storage now.
func (r *Ring) HasStorage() bool { return r.buf.Load() != nil }
