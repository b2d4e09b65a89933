package tcp

import "time"

// SYN cookies (RFC 4987 section 3.6, in the shape of Linux's
// net/ipv4/syncookies.c). When a listener's SYN queue is full, the
// SYN-ACK's sequence number encodes what the listener would have kept:
//
//	bits 31..27  t: a counter of 64-second ticks of virtual time, mod 32
//	bits 26..24  m: index of the MSS in cookieMSSTable (rounded down)
//	bits 23..0   a keyed hash of the 4-tuple, the peer's ISN and t
//
// The returning ACK is valid when ack-1 decodes to a t no older than
// cookieMaxAge ticks and the hash matches. Window scale and
// SACK-permitted cannot be in the sequence number; when the peer sent
// timestamps they ride in the low 5 bits of our TSval as Linux does
// (cookie_init_timestamp), otherwise they are lost (RFC 4987 section 3.6
// notes this cost).
const (
	cookieTick   = 64 * time.Second
	cookieMaxAge = 2 // ticks
	cookieTSBits = 5 // wscale (4 bits, 0xf = none) + SACK (1 bit)
)

// cookieMSSTable are the MSS values a cookie can carry (3 bits).
func cookieMSSTable() [8]uint16 {
	return [8]uint16{536, 1200, 1300, 1400, 1440, 1460, 4312, 8960}
}

func cookieMSSIndex(mss uint16) uint32 {
	tab := cookieMSSTable()
	idx := 0
	for i, v := range tab {
		if v <= mss {
			idx = i
		}
	}
	return uint32(idx)
}

func (s *Stack) cookieHash(t fourTuple, peerISN Seq, tick uint32) uint32 {
	var w [hashWordsMax]uint64
	m := append(t.words(&w), uint64(peerISN)<<32|uint64(tick))
	return uint32(sipHash24(s.cookieKey, m)) & 0xffffff
}

func cookieTickAt(now time.Duration) uint32 { return uint32(now/cookieTick) & 31 }

// makeCookie returns the ISN to send in a cookie SYN-ACK.
func (s *Stack) makeCookie(now time.Duration, t fourTuple, peerISN Seq, mss uint16) Seq {
	tick := cookieTickAt(now)
	return Seq(tick<<27 | cookieMSSIndex(mss)<<24 | s.cookieHash(t, peerISN, tick))
}

// checkCookie validates the cookie echoed in ack-1 and returns the MSS it
// carried.
func (s *Stack) checkCookie(now time.Duration, t fourTuple, peerISN Seq, cookie Seq) (uint16, bool) {
	c := uint32(cookie)
	tick := c >> 27
	age := (cookieTickAt(now) - tick) & 31
	if age > cookieMaxAge {
		return 0, false
	}
	if s.cookieHash(t, peerISN, tick) != c&0xffffff {
		return 0, false
	}
	return cookieMSSTable()[(c>>24)&7], true
}

// cookieTSVal folds window scale and SACK-permitted into a timestamp
// value's low bits.
func cookieTSVal(ts uint32, hasWS bool, ws uint8, sack bool) uint32 {
	opt := uint32(0xf)
	if hasWS && ws <= 14 {
		opt = uint32(ws)
	}
	if sack {
		opt |= 0x10
	}
	return ts&^(1<<cookieTSBits-1) | opt
}

// cookieTSDecode recovers what cookieTSVal stored.
func cookieTSDecode(ecr uint32) (hasWS bool, ws uint8, sack bool) {
	opt := ecr & (1<<cookieTSBits - 1)
	if opt&0xf != 0xf {
		hasWS, ws = true, uint8(opt&0xf)
	}
	return hasWS, ws, opt&0x10 != 0
}
