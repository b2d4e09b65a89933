package tcp

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// openTo plays a peer that connects from rport to the harness's lport and
// sends data with the handshake's last ACK; it returns the SYN-ACK.
func (h *harness) openTo(lport, rport uint16, iss Seq, data []byte) captured {
	h.inject(Repr{SrcPort: rport, DstPort: lport, Seq: iss, Flags: FlagSYN, Window: 65535, MSS: 1460})
	sa := h.one()
	h.inject(Repr{SrcPort: rport, DstPort: lport, Seq: iss + 1, Ack: sa.Seq + 1, Flags: FlagACK | FlagPSH, Window: 65535, Payload: data})
	h.take()
	return sa
}

// brief names each event by its socket's port, its mask and its data.
func brief(evs []Event) []string {
	var out []string
	for _, e := range evs {
		var who string
		if e.Listener != nil {
			who = "listener:" + itoa(int64(e.Listener.Addr().Port))
		} else {
			who = "conn:" + itoa(int64(e.Conn.RemoteAddr().Port))
		}
		d, _ := e.Data.(string)
		out = append(out, who+" mask="+itoa(int64(e.Mask))+" data="+d)
	}
	return out
}

var _ = Describe("EventSet", func() {
	It("gives each set only its own sockets' events, with their data", func() {
		h := newHarness(DefaultConfig())
		var a, b EventSet
		la, err := h.s.Listen(h.local, 80, 16)
		Expect(err).NotTo(HaveOccurred())
		lb, err := h.s.Listen(h.local, 81, 16)
		Expect(err).NotTo(HaveOccurred())
		a.AddListener(la, "a-listener")
		b.AddListener(lb, "b-listener")

		h.openTo(80, 40000, 1000, nil)
		h.openTo(81, 40001, 5000, nil)
		Expect(h.s.Events(nil)).To(BeEmpty(), "sockets in sets stay off the stack's list")

		Expect(brief(a.Events(nil))).To(Equal([]string{"listener:80 mask=16 data=a-listener"}))
		Expect(brief(b.Events(nil))).To(Equal([]string{"listener:81 mask=16 data=b-listener"}))
		Expect(a.Events(nil)).To(BeEmpty(), "edge-triggered: drained")

		ca, ok := la.Accept()
		Expect(ok).To(BeTrue())
		a.Add(ca, "conn-a")
		cb, ok := lb.Accept()
		Expect(ok).To(BeTrue())
		b.Add(cb, "conn-b")
		// Established before it was accepted: writable.
		Expect(brief(a.Events(nil))).To(Equal([]string{"conn:40000 mask=2 data=conn-a"}))
		Expect(brief(b.Events(nil))).To(Equal([]string{"conn:40001 mask=2 data=conn-b"}))

		h.inject(Repr{SrcPort: 40001, DstPort: 81, Seq: 5001, Ack: cb.iss + 1, Flags: FlagACK | FlagPSH, Window: 65535, Payload: []byte("to b")})
		Expect(a.Events(nil)).To(BeEmpty())
		Expect(brief(b.Events(nil))).To(Equal([]string{"conn:40001 mask=1 data=conn-b"}))
		Expect(h.s.Events(nil)).To(BeEmpty())
	})

	It("reports conditions that came before the connection joined (data with the handshake's ACK)", func() {
		h := newHarness(DefaultConfig())
		var set EventSet
		l, _ := h.s.Listen(h.local, 80, 16)
		set.AddListener(l, nil)
		h.openTo(80, 40000, 1000, []byte("PING\r\n"))
		Expect(set.Events(nil)).To(HaveLen(1))
		c, ok := l.Accept()
		Expect(ok).To(BeTrue())
		set.Add(c, "redis")
		Expect(brief(set.Events(nil))).To(Equal([]string{"conn:40000 mask=3 data=redis"}), "readable and writable")
		Expect(h.s.Events(nil)).To(BeEmpty(), "taken off the stack's list when it joined")
	})

	It("delivers an active open's completion to the opener's set", func() {
		h := newHarness(DefaultConfig())
		var set EventSet
		c, err := h.s.Connect(h.now, Addr{h.local, 0}, Addr{h.remote, 6379})
		Expect(err).NotTo(HaveOccurred())
		set.Add(c, "opener")
		syn := h.one()
		h.inject(Repr{SrcPort: 6379, DstPort: syn.SrcPort, Seq: 9000, Ack: syn.Seq + 1, Flags: FlagSYN | FlagACK, Window: 65535, MSS: 1460})
		ev := set.Events(nil)
		Expect(ev).To(HaveLen(1))
		Expect(ev[0].Conn).To(BeIdenticalTo(c))
		Expect(ev[0].Mask & EventWritable).NotTo(BeZero())
		Expect(ev[0].Data).To(Equal("opener"))
		Expect(h.s.Events(nil)).To(BeEmpty())
	})

	It("keeps the stack's list for sockets in no set", func() {
		h := newHarness(DefaultConfig())
		var set EventSet
		l, _ := h.s.Listen(h.local, 80, 16)
		set.AddListener(l, nil)
		_, _ = h.s.Listen(h.local, 81, 16)
		h.openTo(81, 40001, 5000, nil)
		Expect(brief(h.s.Events(nil))).To(Equal([]string{"listener:81 mask=16 data=", "conn:40001 mask=2 data="}))
		Expect(set.Events(nil)).To(BeEmpty())
	})

	It("allocates nothing per event", func() {
		h := newHarness(DefaultConfig())
		var set EventSet
		l, _ := h.s.Listen(h.local, 80, 16)
		set.AddListener(l, nil)
		h.openTo(80, 40000, 1000, nil)
		c, _ := l.Accept()
		set.Add(c, c)
		buf := make([]Event, 0, 8)
		buf = set.Events(buf[:0])
		allocs := testing.AllocsPerRun(1000, func() {
			c.notify(EventReadable)
			c.notify(EventWritable)
			buf = set.Events(buf[:0])
		})
		Expect(allocs).To(BeZero())
		Expect(buf).To(Equal([]Event{{Conn: c, Mask: EventReadable | EventWritable, Data: c}}))
	})
})
