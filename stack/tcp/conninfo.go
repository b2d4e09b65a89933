package tcp

import (
	"sort"
	"time"
)

// SocketInfo is one row of a socket listing, what `ss -tni` shows for a
// kernel socket and Gazelle's `gazellectl lstack show -c` for its own: the
// tuple, the state, the bytes queued each way and the figures that say
// why a connection is slow (smoothed RTT, congestion window).
//
// It is named SocketInfo, not ConnInfo, because ConnInfo already is the
// TCP_INFO-like snapshot of one connection (Conn.Info); a SocketInfo also
// describes listeners.
//
// For a connection, SendQueue and RecvQueue are ss's Send-Q and Recv-Q
// (ss(8), net/ipv4/tcp_diag.c tcp_diag_get_info): bytes written and not
// yet acknowledged, and bytes received in order and not yet read. For a
// listener (State LISTEN) they are, as in ss, the accept queue's limit
// (the backlog) and the connections waiting in it; the RTT and window
// fields are then zero.
type SocketInfo struct {
	Local  Addr
	Remote Addr
	State  State
	// SendQueue: bytes written by the application and not yet
	// acknowledged by the peer (the send buffer); for a listener, the
	// backlog.
	SendQueue int
	// RecvQueue: bytes received in order and not yet read; for a
	// listener, the connections in its accept queue.
	RecvQueue int
	// Unacked: bytes sent and not yet acknowledged (SND.MAX - SND.UNA,
	// RFC 9293 section 3.3.1), the part of SendQueue in flight.
	Unacked int
	// SRTT and RTO are RFC 6298's smoothed round-trip time and
	// retransmission timeout; SRTT is 0 until the first sample.
	SRTT time.Duration
	RTO  time.Duration
	// Cwnd and Ssthresh are the congestion window and slow-start
	// threshold in bytes (RFC 5681 section 3.1).
	Cwnd     int
	Ssthresh int
	// MSS is the payload per segment sent; SndWnd the peer's window.
	MSS    int
	SndWnd int
}

// NumStates is the number of connection states; StateCounts is indexed
// by State.
const NumStates = int(StateTimeWait) + 1

// StateCounts counts sockets by state, indexed by State (LISTEN counts
// listeners).
type StateCounts [NumStates]int

// AppendSockets appends one SocketInfo per listener (by port) and per
// connection (in creation order), so that a listing is stable from one
// call to the next. Like every Stack method it must run on the goroutine
// that owns the stack (for stack/rt, the lcore).
func (s *Stack) AppendSockets(dst []SocketInfo) []SocketInfo {
	start := len(dst)
	for _, l := range s.listeners {
		dst = append(dst, SocketInfo{Local: l.Addr(), State: StateListen,
			SendQueue: l.backlog, RecvQueue: len(l.acceptQ)})
	}
	ls := dst[start:]
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Local.Port != ls[j].Local.Port {
			return ls[i].Local.Port < ls[j].Local.Port
		}
		return ls[i].Local.IP.Compare(ls[j].Local.IP) < 0
	})
	cs := make([]*Conn, 0, s.conns.len())
	for c := range s.conns.all() {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].seqNo < cs[j].seqNo })
	for _, c := range cs {
		dst = append(dst, c.socketInfo())
	}
	return dst
}

// CountStates counts the stack's sockets by state without listing them,
// for a gauge scraped every second.
func (s *Stack) CountStates() StateCounts {
	var n StateCounts
	n[StateListen] = len(s.listeners)
	for c := range s.conns.all() {
		if int(c.state) < NumStates {
			n[c.state]++
		}
	}
	return n
}

func (c *Conn) socketInfo() SocketInfo {
	return SocketInfo{
		Local: c.LocalAddr(), Remote: c.RemoteAddr(), State: c.state,
		SendQueue: c.sndBuf.length(), RecvQueue: c.rcvBuf.length(), Unacked: c.sndMax.Sub(c.sndUna),
		SRTT: c.rtt.srtt, RTO: c.rtt.current(), Cwnd: c.ccs.cwnd, Ssthresh: c.ccs.ssthresh,
		MSS: c.mss, SndWnd: c.sndWnd,
	}
}
