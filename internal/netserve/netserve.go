// Package netserve is the accept loop the real-time apps (apps/kv,
// apps/echo) share: it keeps the listeners a server was given so that
// Close can close them all, and ends quietly when a listener is closed.
package netserve

import (
	"errors"
	"net"
	"sync"
)

// Listeners are the listeners of one server. The zero value is ready.
type Listeners struct {
	mu  sync.Mutex
	lns []net.Listener
}

// Serve records ln, then accepts on it until it is closed (Serve then
// returns nil) or fails. accepted runs in the accept loop for each
// connection and starts whatever serves it.
func (l *Listeners) Serve(ln net.Listener, accepted func(net.Conn)) error {
	l.mu.Lock()
	l.lns = append(l.lns, ln)
	l.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		accepted(c)
	}
}

// Close closes every listener given to Serve.
func (l *Listeners) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ln := range l.lns {
		_ = ln.Close()
	}
	l.lns = nil
}
