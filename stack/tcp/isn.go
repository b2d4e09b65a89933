package tcp

import "time"

// fourTuple identifies a connection: local and remote address and port.
type fourTuple struct {
	localAddr, remoteAddr [4]byte
	localPort, remotePort uint16
}

func (t fourTuple) words() (uint64, uint64) {
	a := uint64(t.localAddr[0])<<24 | uint64(t.localAddr[1])<<16 | uint64(t.localAddr[2])<<8 | uint64(t.localAddr[3])
	b := uint64(t.remoteAddr[0])<<24 | uint64(t.remoteAddr[1])<<16 | uint64(t.remoteAddr[2])<<8 | uint64(t.remoteAddr[3])
	return a<<32 | b, uint64(t.localPort)<<16 | uint64(t.remotePort)
}

// isn returns the initial sequence number for a connection, as RFC 6528
// section 3 defines it: ISN = M + F(localip, localport, remoteip,
// remoteport, secretkey), where M is a timer ticking every 4 microseconds
// (RFC 9293 section 3.4.1) and F a keyed hash. The clock is the caller's
// virtual time, so the engine stays deterministic.
func (s *Stack) isn(now time.Duration, t fourTuple) Seq {
	a, b := t.words()
	f := sipHash24(s.isnKey, []uint64{a, b})
	m := uint64(now / (4 * time.Microsecond))
	return Seq(uint32(f) + uint32(m))
}
