package gonet

import (
	"sync"
	"time"
)

// deadline is a settable deadline whose expiry closes a channel, the
// shape of net.Pipe's pipeDeadline: a waiter selects on wait() together
// with its readiness channel.
type deadline struct {
	mu     sync.Mutex
	timer  *time.Timer
	cancel chan struct{} // closed when the deadline passes
}

func newDeadline() *deadline { return &deadline{cancel: make(chan struct{})} }

// set arms the deadline at t; the zero time disarms it. A time in the
// past expires it at once.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil && !d.timer.Stop() {
		<-d.cancel // the timer fired: wait for it to close cancel
	}
	d.timer = nil
	closed := isClosedChan(d.cancel)
	if t.IsZero() {
		if closed {
			d.cancel = make(chan struct{})
		}
		return
	}
	if dur := time.Until(t); dur > 0 {
		if closed {
			d.cancel = make(chan struct{})
		}
		ch := d.cancel
		d.timer = time.AfterFunc(dur, func() { close(ch) })
		return
	}
	if !closed {
		close(d.cancel)
	}
}

// wait returns a channel closed when the deadline has passed.
func (d *deadline) wait() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cancel
}

// expired reports whether the deadline has passed.
func (d *deadline) expired() bool { return isClosedChan(d.wait()) }

func isClosedChan(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
