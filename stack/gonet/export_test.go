package gonet

// RingsHeld reports whether the connection's receive and send rings
// hold storage now: a ring without storage offers its whole size (Space
// is Max), one with storage smaller than that only what it holds.
func (c *Conn) RingsHeld() (rx, tx bool) {
	return c.p.Rx().Space() != c.p.Rx().Max(), c.p.Tx().Space() != c.p.Tx().Max()
}

// WakeChannels reports whether the read and write wake-up channels
// have been made.
func (c *Conn) WakeChannels() (rd, wr bool) { return c.rdSig.p.Load() != nil, c.wrSig.p.Load() != nil }

// LazySig is the lazily made wake-up channel of a Conn's Read and
// Write, for the specs of its protocol.
type LazySig struct{ l lazySig }

// Now returns the channel as it is, nil before it is made (the waiter's
// load before its look).
func (s *LazySig) Now() chan struct{} { return s.l.now() }

// Get makes the channel if need be (what SetDeadline does).
func (s *LazySig) Get() chan struct{} { return s.l.get() }

// Wait is the waiter's step after a look that found nothing.
func (s *LazySig) Wait(seen chan struct{}) { s.l.wait(seen) }

// Signal is the signaller's step after it changed the condition.
func (s *LazySig) Signal() { s.l.signal() }
