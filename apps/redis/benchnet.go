package redis

import (
	"errors"
	"io"
	"slices"
	"time"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// benchNet is how one of the generator's ae threads reaches its
// sockets: as an event loop on the stack's lcore, calling the instance (lcoreNet),
// or as a thread on a core of its own whose sockets cross to the stack
// threads (threadNet: Gazelle's asymmetric model; system calls on a
// kernel host, where the NIC's interrupts are taken on other CPUs).
type benchNet interface {
	// connect opens the thread's i-th client's connection.
	connect(m hw.Meter, i int, bc *benchClient) error
	// ready appends the clients with readiness to dst: the turn's
	// epoll_wait (charged here or by done). busy says the loop has
	// writes armed for this turn (their sockets are writable, so the
	// wait returns at once): it does not sleep.
	ready(m hw.Meter, dst []benchEvent, busy bool) []benchEvent
	// done ends the turn (the wait, for a loop that waits last).
	done(m hw.Meter, worked bool)
	control(m hw.Meter, n int64)
	// write writes what it can of p and returns the rest.
	write(m hw.Meter, bc *benchClient, p []byte) ([]byte, error)
	// read appends what arrived to buf.
	read(m hw.Meter, bc *benchClient, buf []byte) ([]byte, error)
	close(m hw.Meter, bc *benchClient)
	connected(bc *benchClient) bool
}

// benchEvent is one client's readiness in a turn.
type benchEvent struct {
	bc                         *benchClient
	failed, readable, writable bool
}

// lcoreNet is the generator as an event loop on the stack's lcore.
type lcoreNet struct {
	in     *lstack.Instance
	set    *lstack.EventSet
	remote tcp.Addr
	port   func(i int) uint16
	events []tcp.Event
}

func (n *lcoreNet) connect(m hw.Meter, i int, bc *benchClient) error {
	var lp uint16
	if n.port != nil {
		lp = n.port(i)
	}
	c, err := n.set.Connect(m, lp, n.remote, bc)
	if err != nil {
		return err
	}
	c.SetNoDelay(true) // redis-benchmark's hiredis sets TCP_NODELAY
	bc.c = c
	return nil
}

func (n *lcoreNet) ready(_ hw.Meter, dst []benchEvent, _ bool) []benchEvent {
	n.events = n.set.Events(n.events[:0])
	for _, ev := range n.events {
		dst = append(dst, benchEvent{bc: ev.Data.(*benchClient),
			failed:   ev.Mask&tcp.EventError != 0,
			readable: ev.Mask&(tcp.EventReadable|tcp.EventHangup) != 0,
			writable: ev.Mask&tcp.EventWritable != 0})
	}
	return dst
}

func (n *lcoreNet) done(m hw.Meter, worked bool) { n.set.Wait(m, worked) }

func (n *lcoreNet) control(m hw.Meter, k int64) { n.set.Control(m, k) }

func (n *lcoreNet) write(m hw.Meter, bc *benchClient, p []byte) ([]byte, error) {
	return n.in.WriteAvailable(m, bc.c, p)
}

// read is hiredis's read of up to 16 KiB per readable event
// (redisBufferRead), as threadNet's: a read that comes back short ends
// it, where reading until the socket is empty would make one more read,
// returning EAGAIN, per event (strace -c of redis-benchmark counts one
// recvfrom a request at 1, 50 and 1,000 clients). A full read reads
// again: the real loop's socket, level-triggered, would be ready again.
func (n *lcoreNet) read(m hw.Meter, bc *benchClient, buf []byte) ([]byte, error) {
	for {
		buf = slices.Grow(buf, readLen)
		k, err := n.in.Read(m, bc.c, buf[len(buf):len(buf)+readLen])
		buf = buf[:len(buf)+k]
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil // as ReadAvailable's end of stream: the replies read count
		case err != nil:
			return buf, err
		case k < readLen:
			return buf, nil
		}
	}
}

func (n *lcoreNet) close(m hw.Meter, bc *benchClient) { _ = n.in.Close(m, bc.c) }

func (n *lcoreNet) connected(bc *benchClient) bool { return bc.c.Connected() }

// ThreadNet places one of the generator's threads off the stack's
// lcores: its connections are opened through the bridges, its i-th
// client's through Bridges[i % len] with local port Ports[i % len](i)
// (ports whose replies RSS steers to that bridge's queue), and it waits
// on an epoll of its own, waking its core with Wake when it slept. The
// threads of one generator may share their bridges and ports (one
// process's), each with its own Wake.
type ThreadNet struct {
	Bridges []*lstack.Bridge
	Ports   []func(i int) uint16
	Wake    func(at time.Duration)
}

// threadNet is the generator as a thread of its own (ThreadNet).
type threadNet struct {
	cfg    ThreadNet
	remote tcp.Addr
	ep     *lstack.Epoll
	socks  map[*lstack.Socket]*benchClient
	buf    []byte
	sready []*lstack.Socket
}

func (n *threadNet) connect(m hw.Meter, i int, bc *benchClient) error {
	k := i % len(n.cfg.Bridges)
	var lp uint16
	if k < len(n.cfg.Ports) && n.cfg.Ports[k] != nil {
		lp = n.cfg.Ports[k](i)
	}
	s, err := n.cfg.Bridges[k].Connect(m, lstack.Dial{LocalPort: lp, Remote: n.remote, NoDelay: true}, n.ep)
	if err != nil {
		return err
	}
	bc.s = s
	n.socks[s] = bc
	return nil
}

// ready is the turn's epoll_wait; a wait that finds nothing puts the
// thread to sleep until a socket is ready.
func (n *threadNet) ready(m hw.Meter, dst []benchEvent, busy bool) []benchEvent {
	n.sready = n.ep.Wait(m, n.sready[:0], busy, n.cfg.Wake)
	for _, s := range n.sready {
		if bc := n.socks[s]; bc != nil {
			dst = append(dst, benchEvent{bc: bc, readable: true})
		}
	}
	return dst
}

func (n *threadNet) done(hw.Meter, bool) {}

func (n *threadNet) control(m hw.Meter, k int64) { n.ep.Control(m, k) }

func (n *threadNet) write(m hw.Meter, bc *benchClient, p []byte) ([]byte, error) {
	w, err := bc.s.Write(m, p)
	if errors.Is(err, lstack.ErrRingFull) {
		return p, nil // kept, and written with the next request
	}
	return p[w:], err
}

// read is hiredis's one read of up to 16 KiB per readable event
// (redisBufferRead); more left makes the socket ready again.
func (n *threadNet) read(m hw.Meter, bc *benchClient, buf []byte) ([]byte, error) {
	k, err := bc.s.Read(m, n.buf)
	switch {
	case errors.Is(err, io.EOF):
		return buf, tcp.ErrClosed
	case err != nil:
		return buf, err
	}
	if k == len(n.buf) {
		n.ep.Requeue(bc.s)
	}
	return append(buf, n.buf[:k]...), nil
}

func (n *threadNet) close(m hw.Meter, bc *benchClient) {
	bc.s.Close(m)
	delete(n.socks, bc.s)
}

func (n *threadNet) connected(bc *benchClient) bool { return bc.s.Connected() }
