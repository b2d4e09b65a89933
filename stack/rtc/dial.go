package rtc

import (
	"fmt"

	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// Dial opens a connection from lc to remote, served by h (lcore only:
// call it from a task or a callback on lc). dialed is called once on lc
// with the outcome: nil when the handshake completed, else the engine's
// error (tcp.ErrConnRefused, tcp.ErrTimeout, rt.ErrStopped), after
// which the connection is forgotten and h gets no callback. Bytes may be
// written before the outcome; they go out once the handshake completes.
// The error returned is for a dial that could not start: no source
// address for remote's family, no free port, the connection limit.
//
// With RSS on the port the local port is chosen so that the peer's
// segments land on lc's queue (rt.Lcore.LocalPortFor); use
// rt.Runtime.DialLcore to spread dials over the lcores.
func Dial(lc *rt.Lcore, remote tcp.Addr, h Handler, dialed func(c *Conn, err error)) (*Conn, error) {
	if h == nil || dialed == nil {
		return nil, fmt.Errorf("rtc: dial %v: %w", remote, ErrNilHandler)
	}
	tc, err := lc.ConnectTCP(remote)
	if err != nil {
		return nil, fmt.Errorf("rtc: dial %v: %w", remote, err)
	}
	c := newConn(lc, tc, h)
	c.dialed = dialed
	return c, nil
}
