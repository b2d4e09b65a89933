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
