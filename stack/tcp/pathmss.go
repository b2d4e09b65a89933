package tcp

import "time"

// PathMSSer is implemented by an Output whose network layer keeps a path
// MTU per destination (RFC 8201 for IPv6, RFC 1191 for IPv4). PathMSS
// returns the MSS the path to dst allows (the path MTU less the network
// and TCP headers, options excluded), or 0 when it knows nothing below
// what the link allows. The engine asks it when a connection negotiates
// its MSS, so that a connection opened after a Packet Too Big starts at
// the lowered size (RFC 9293 section 3.7.1's Eff.snd.MSS takes the MMS_S
// of the path).
type PathMSSer interface {
	PathMSS(now time.Duration, dst IP) int
}

// optionBytes is the TCP option space every data segment of c carries:
// the timestamps option when negotiated (RFC 6691: the MSS excludes
// options).
func (c *Conn) optionBytes() int {
	if c.tsOK {
		return 12
	}
	return 0
}

// LowerPathMSS lowers the connection's send MSS to what a path MSS of
// pathMSS (the path MTU less the network and TCP headers, as PathMSSer
// gives it) leaves after its options, and reports whether it did (RFC
// 8201 section 5.2: the packetization layer must follow a lowered path
// MTU; RFC 9293 section 3.7.1's effective send MSS). It never raises
// the MSS nor takes it below 64, and does nothing before the MSS is
// negotiated (the SYN's own size is the advertised MSS's).
//
// Segments already sent are not resent here: the one the router dropped
// is retransmitted by the connection's normal loss recovery (fast
// retransmit on duplicate ACKs, or the RTO; RFC 5681, RFC 6298), which
// builds every retransmission at the current MSS and so at the smaller
// size. Linux resends at once (tcp_simple_retransmit from
// tcp_v6_mtu_reduced) without a congestion response; here the loss is
// recovered, and responded to, as any other.
func (c *Conn) LowerPathMSS(pathMSS int) bool {
	if c.mss == 0 {
		return false
	}
	mss := maxInt(pathMSS-c.optionBytes(), 64)
	if mss >= c.mss {
		return false
	}
	c.mss = mss
	c.ccs.mss = mss
	if c.ccs.cwnd < mss {
		c.ccs.cwnd = mss
	}
	return true
}

// LowerPathMSS applies a lowered path MSS to dst (see Conn.LowerPathMSS)
// to every connection to dst, and returns how many it lowered. The
// network layer calls it when its path MTU cache drops the estimate for
// dst (a Packet Too Big, RFC 8201 section 4). It walks every connection:
// such messages are rare, and a per-destination index would cost every
// connection's open and close.
func (s *Stack) LowerPathMSS(dst IP, pathMSS int) int {
	n := 0
	for c := range s.conns.all() {
		if c.id.remoteAddr == dst && c.LowerPathMSS(pathMSS) {
			n++
		}
	}
	return n
}

// pathMSS returns the path MSS the Output knows for dst, or 0.
func (s *Stack) pathMSS(now time.Duration, dst IP) int {
	if p, ok := s.out.(PathMSSer); ok {
		return p.PathMSS(now, dst)
	}
	return 0
}
