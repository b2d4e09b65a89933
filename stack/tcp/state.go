package tcp

// State is a connection state of RFC 9293 section 3.3.2.
type State uint8

// The states.
const (
	StateClosed State = iota
	StateListen
	StateSynSent
	StateSynReceived
	StateEstablished
	StateFinWait1
	StateFinWait2
	StateCloseWait
	StateClosing
	StateLastAck
	StateTimeWait
)

func (s State) String() string {
	switch s {
	case StateClosed:
		return "CLOSED"
	case StateListen:
		return "LISTEN"
	case StateSynSent:
		return "SYN-SENT"
	case StateSynReceived:
		return "SYN-RECEIVED"
	case StateEstablished:
		return "ESTABLISHED"
	case StateFinWait1:
		return "FIN-WAIT-1"
	case StateFinWait2:
		return "FIN-WAIT-2"
	case StateCloseWait:
		return "CLOSE-WAIT"
	case StateClosing:
		return "CLOSING"
	case StateLastAck:
		return "LAST-ACK"
	case StateTimeWait:
		return "TIME-WAIT"
	}
	return "UNKNOWN"
}

// synchronized reports whether the state is one of RFC 9293's
// synchronized states (ESTABLISHED and after).
func (s State) synchronized() bool { return s >= StateEstablished }

// countsAsEstab: netstat's CurrEstab counts ESTABLISHED and CLOSE-WAIT
// (RFC 1213 tcpCurrEstab).
func (s State) countsAsEstab() bool { return s == StateEstablished || s == StateCloseWait }

// setState moves c to st, keeping curr_estab right.
func (c *Conn) setState(st State) {
	if c.state.countsAsEstab() && !st.countsAsEstab() {
		c.s.stats.CurrEstab--
	}
	if !c.state.countsAsEstab() && st.countsAsEstab() {
		c.s.stats.CurrEstab++
	}
	c.state = st
}
