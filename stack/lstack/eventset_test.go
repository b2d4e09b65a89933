package lstack_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/sim"
	"github.com/savanna-sim/savanna/sim/nic"
	"github.com/savanna-sim/savanna/stack/lstack"
	"github.com/savanna-sim/savanna/stack/tcp"
)

// setApp is an application with its own event set: it listens on a
// port, or connects to one and writes hello, and records its events.
type setApp struct {
	set      *lstack.EventSet
	ln       *tcp.Listener
	remote   tcp.Addr
	dial     bool
	wrote    bool
	conn     *tcp.Conn
	accepted []*tcp.Conn
	foreign  int // events of sockets that are not this app's
	got      []byte
	evs      []tcp.Event
	name     string
	seen     int64 // events the set returned
	waits    int64 // waits charged
}

func (a *setApp) Poll(m hw.Meter) (bool, time.Duration) {
	in := a.set.Instance()
	if a.dial && a.conn == nil {
		c, err := a.set.Connect(m, 0, a.remote, a.name)
		Expect(err).NotTo(HaveOccurred())
		a.conn = c
		return true, sim.Never
	}
	a.evs = a.set.Events(a.evs[:0])
	for _, ev := range a.evs {
		if ev.Listener != nil {
			if ev.Listener != a.ln {
				a.foreign++
			}
			a.set.AcceptAll(m, a.ln, func(c *tcp.Conn) any {
				a.accepted = append(a.accepted, c)
				return a.name
			})
			continue
		}
		if ev.Data != a.name {
			a.foreign++
			continue
		}
		if a.dial && !a.wrote && ev.Mask&tcp.EventWritable != 0 && ev.Conn.Connected() {
			a.wrote = true
			_, err := in.Write(m, ev.Conn, []byte("hello "+a.name))
			Expect(err).NotTo(HaveOccurred())
		}
		if ev.Mask&tcp.EventReadable != 0 {
			var err error
			a.got, _, err = in.ReadAvailable(m, ev.Conn, a.got)
			Expect(err).NotTo(HaveOccurred())
		}
	}
	a.seen += int64(len(a.evs))
	a.waits++
	a.set.Wait(m, len(a.evs) > 0)
	return len(a.evs) > 0, sim.Never
}

var _ = Describe("EventSet", func() {
	It("gives each application on an instance only its own sockets' events", func() {
		p := newPair(1, nic.LinkConfig{Latency: 10 * time.Microsecond}, tcp.DefaultConfig(), 1500)
		var servers, clients []*setApp
		for i, port := range []uint16{7001, 7002} {
			name := []string{"a", "b"}[i]
			s := &setApp{set: p.server.in.NewEventSet(), name: name}
			ln, err := s.set.Listen(port, 16)
			Expect(err).NotTo(HaveOccurred())
			s.ln = ln
			p.server.core.Attach(s)
			servers = append(servers, s)
			c := &setApp{set: p.client.in.NewEventSet(), dial: true, remote: tcp.AddrFrom4(p.serverAddr, port), name: name}
			p.client.core.Attach(c)
			clients = append(clients, c)
		}
		p.eng.RunUntil(20 * time.Millisecond)
		for i, s := range servers {
			Expect(s.accepted).To(HaveLen(1), s.name)
			Expect(string(s.got)).To(Equal("hello "+s.name), s.name)
			Expect(s.foreign).To(BeZero(), s.name)
			Expect(clients[i].foreign).To(BeZero(), clients[i].name)
		}
		Expect(p.server.in.TCP().Events(nil)).To(BeEmpty(), "nothing left on the stack's own list")
		Expect(p.client.in.TCP().Events(nil)).To(BeEmpty())
	})

	It("prices each wait per call and per ready event it returned", func() {
		p := newPair(1, nic.LinkConfig{Latency: 10 * time.Microsecond}, tcp.DefaultConfig(), 1500)
		s := &setApp{set: p.server.in.NewEventSet(), name: "a"}
		ln, err := s.set.Listen(7001, 16)
		Expect(err).NotTo(HaveOccurred())
		s.ln = ln
		p.server.core.Attach(s)
		c := &setApp{set: p.client.in.NewEventSet(), dial: true, remote: tcp.AddrFrom4(p.serverAddr, 7001), name: "a"}
		p.client.core.Attach(c)
		p.eng.RunUntil(20 * time.Millisecond)
		for _, side := range []struct {
			app  *setApp
			core *sim.Core
		}{{s, p.server.core}, {c, p.client.core}} {
			Expect(side.app.seen).To(BeNumerically(">", 0), side.app.name)
			ops := side.core.Stats().Ops
			Expect(ops[lstack.CostEpollEvent]).To(Equal(side.app.seen))
			Expect(ops[lstack.CostEpollWait]).To(Equal(side.app.waits))
		}
	})
})
