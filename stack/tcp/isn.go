package tcp

import (
	"encoding/binary"
	"time"
)

// fourTuple identifies a connection: local and remote address and port.
type fourTuple struct {
	localAddr, remoteAddr IP
	localPort, remotePort uint16
}

// hashWordsMax is the most words words writes: an IPv6 4-tuple (five)
// and the one a SYN cookie adds.
const hashWordsMax = 6

// words writes the 4-tuple into w as the 64-bit words the keyed hashes
// (ISN, SYN cookies) take and returns them. An IPv4 tuple is the two
// words it always was (both addresses big-endian in one, the ports in
// the other), so that the ISNs and cookies an IPv4 run draws, and the
// reports built on them, do not depend on IPv6 existing; any other tuple
// is its 32 address bytes in four words and the ports in a fifth. The
// word count is part of SipHash's input, so the two shapes never collide.
func (t fourTuple) words(w *[hashWordsMax]uint64) []uint64 {
	ports := uint64(t.localPort)<<16 | uint64(t.remotePort)
	if t.localAddr.Is4() && t.remoteAddr.Is4() {
		a, b := t.localAddr.a, t.remoteAddr.a
		w[0] = uint64(binary.BigEndian.Uint32(a[:4]))<<32 | uint64(binary.BigEndian.Uint32(b[:4]))
		w[1] = ports
		return w[:2]
	}
	a, b := t.localAddr.a, t.remoteAddr.a
	w[0] = binary.BigEndian.Uint64(a[:8])
	w[1] = binary.BigEndian.Uint64(a[8:])
	w[2] = binary.BigEndian.Uint64(b[:8])
	w[3] = binary.BigEndian.Uint64(b[8:])
	w[4] = ports
	return w[:5]
}

// isn returns the initial sequence number for a connection, as RFC 6528
// section 3 defines it: ISN = M + F(localip, localport, remoteip,
// remoteport, secretkey), where M is a timer ticking every 4 microseconds
// (RFC 9293 section 3.4.1) and F a keyed hash. The clock is the caller's
// virtual time, so the engine stays deterministic.
func (s *Stack) isn(now time.Duration, t fourTuple) Seq {
	var w [hashWordsMax]uint64
	f := sipHash24(s.isnKey, t.words(&w))
	m := uint64(now / (4 * time.Microsecond))
	return Seq(uint32(f) + uint32(m))
}
