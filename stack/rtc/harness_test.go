package rtc_test

import (
	"fmt"
	"time"

	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw/ringdev"
	"github.com/savanna-sim/savanna/internal/livetest"
	"github.com/savanna-sim/savanna/stack/iface"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/rt"
	"github.com/savanna-sim/savanna/stack/rtc"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// wire is two stacks in real time joined by a ring pair: A (the
// client) is 10.9.0.1, B (the server) 10.9.0.2.
type wire struct{ a, b *rt.Runtime }

// newWire is livetest's ring pair, with TCP's default buffers.
func newWire() *wire {
	p, err := livetest.NewRingPair(1, 1)
	Expect(err).NotTo(HaveOccurred())
	return &wire{a: p.A, b: p.B}
}

// newSmallWire is a ring pair whose TCP buffers are buf bytes each way,
// so that a stream wraps them many times.
func newSmallWire(buf int) *wire {
	pa, pb, err := ringdev.NewPair(ringdev.Config{Name: "a"}, ringdev.Config{Name: "b"})
	Expect(err).NotTo(HaveOccurred())
	mk := func(p *ringdev.Port, addr string, seed uint64) *rt.Runtime {
		pool, err := ringdev.NewMempool(p.Name()+".pool", 8192, 2048+128)
		Expect(err).NotTo(HaveOccurred())
		tc := tcp.DefaultConfig()
		tc.SendBuffer, tc.RecvBuffer = buf, buf
		r, err := rt.New(rt.Config{Lcores: 1, Seed: seed, Spin: 20 * time.Microsecond, NoLockOSThread: true, RxRing: 2048, TxRing: 2048},
			lstack.Config{Iface: iface.Config{Address: addr}, TCP: tc}, p, pool)
		Expect(err).NotTo(HaveOccurred())
		return r
	}
	w := &wire{a: mk(pa, "10.9.0.1/24", 1), b: mk(pb, "10.9.0.2/24", 2)}
	Expect(w.a.Start()).To(Succeed())
	Expect(w.b.Start()).To(Succeed())
	return w
}

func (w *wire) stop() {
	w.a.Stop()
	w.b.Stop()
}

// server is B's address at port.
func server(port uint16) tcp.Addr { return tcp.AddrFrom4([4]byte{10, 9, 0, 2}, port) }

// dial dials from A's dialling lcore to B's port, served by h, and
// returns the outcome channel (the connection, or the error).
func (w *wire) dial(port uint16, h rtc.Handler) <-chan dialed {
	out := make(chan dialed, 1)
	lc := w.a.DialLcore()
	Expect(lc.Submit(func(lc *rt.Lcore) {
		_, err := rtc.Dial(lc, server(port), h, func(c *rtc.Conn, err error) { out <- dialed{c, err} })
		if err != nil {
			out <- dialed{nil, err}
		}
	})).To(Succeed())
	return out
}

type dialed struct {
	c   *rtc.Conn
	err error
}

// on runs fn on c's lcore.
func on(c *rtc.Conn, fn func()) {
	Expect(c.Lcore().Submit(func(*rt.Lcore) { fn() })).To(Succeed())
}

// funcs is a Handler made of functions (nil ones do nothing), with no
// direct receiver.
type funcs struct {
	readable, writable func(c *rtc.Conn)
	closed             func(c *rtc.Conn, err error)
}

func (f *funcs) Readable(c *rtc.Conn) {
	if f.readable != nil {
		f.readable(c)
	}
}

func (f *funcs) Writable(c *rtc.Conn) {
	if f.writable != nil {
		f.writable(c)
	}
}

func (f *funcs) Closed(c *rtc.Conn, err error) {
	if f.closed != nil {
		f.closed(c, err)
	}
}

// direct is funcs with a direct receiver.
type direct struct {
	funcs
	receive func(c *rtc.Conn, p []byte) int
}

func (d *direct) Receive(c *rtc.Conn, p []byte) int { return d.receive(c, p) }

// orFail formats an error for a result channel.
func orFail(what string, err error) error { return fmt.Errorf("%s: %w", what, err) }
