package sockring

// The drivers embed their rings and pipes by value (Pipe.Init); the specs
// make free-standing ones.

// NewRing returns an empty ring that grows up to max bytes (a power of
// two). hand publishes its writes; nil publishes them at once.
func NewRing(max int, hand Handoff) *Ring {
	r := &Ring{max: max}
	r.setHandoff(hand)
	return r
}

// New returns a pipe with empty rings.
func New(cfg Config, drv Driver) *Pipe {
	p := &Pipe{}
	p.Init(cfg, drv)
	return p
}
