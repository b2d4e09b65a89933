package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Handshake", func() {
	var h *harness
	BeforeEach(func() { h = newHarness(DefaultConfig()) })

	connect := func() *Conn {
		c, err := h.s.Connect(h.now, Addr{h.local, h.lport}, Addr{h.remote, h.rport})
		Expect(err).NotTo(HaveOccurred())
		return c
	}
	// synAck is the peer's answer to our SYN.
	synAck := func(ourISS Seq, p peerOpts) Repr {
		r := Repr{SrcPort: h.rport, DstPort: h.lport, Seq: h.peerISS, Ack: ourISS + 1, Flags: FlagSYN | FlagACK}
		p.apply(&r, h)
		r.TSEcr = h.lastOurTS
		return r
	}

	It("active open: SYN with options, SYN-ACK, ACK (RFC 9293 section 3.5)", func() {
		c := connect()
		syn := h.one()
		Expect(syn.Flags).To(Equal(FlagSYN))
		Expect(syn.MSS).To(BeEquivalentTo(1460))
		Expect(syn.HasWScale).To(BeTrue())
		Expect(syn.WScale).To(BeEquivalentTo(7)) // 6 MiB buffer >> 7 fits 16 bits
		Expect(syn.SACKPermitted).To(BeTrue())
		Expect(syn.HasTS).To(BeTrue())
		Expect(syn.TSEcr).To(BeZero())
		Expect(syn.Window).To(BeEquivalentTo(65535)) // never scaled in a SYN
		Expect(c.State()).To(Equal(StateSynSent))

		h.advance(5 * time.Millisecond)
		h.inject(synAck(syn.Seq, defaultPeer()))
		ack := h.one()
		Expect(ack.Flags).To(Equal(FlagACK))
		Expect(ack.Seq).To(Equal(syn.Seq + 1))
		Expect(ack.Ack).To(Equal(h.peerISS + 1))
		Expect(ack.TSEcr).To(Equal(h.peerTS))
		Expect(c.State()).To(Equal(StateEstablished))
		Expect(c.Info().SRTT).To(Equal(5 * time.Millisecond))
		Expect(c.Info().MSS).To(Equal(1448)) // 1460 - 12 bytes of timestamps (RFC 6691)
		st := h.s.Stats()
		Expect(st.ActiveOpens).To(BeEquivalentTo(1))
		Expect(st.CurrEstab).To(BeEquivalentTo(1))
		ev := h.s.Events(nil)
		Expect(ev).To(HaveLen(1))
		Expect(ev[0].Mask & EventWritable).NotTo(BeZero())
	})

	It("passive open: SYN, SYN-ACK echoing the peer's options, ACK, Accept", func() {
		l, err := h.s.Listen(IP{}, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		syn := Repr{Seq: h.peerISS, Flags: FlagSYN}
		p := defaultPeer()
		p.sack = false
		p.ws = -1
		p.apply(&syn, h)
		h.inject(syn)
		sa := h.one()
		Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
		Expect(sa.Ack).To(Equal(h.peerISS + 1))
		Expect(sa.HasWScale).To(BeFalse())
		Expect(sa.SACKPermitted).To(BeFalse())
		Expect(sa.HasTS).To(BeTrue())
		Expect(sa.TSEcr).To(Equal(h.peerTS))
		_, ok := l.Accept()
		Expect(ok).To(BeFalse())
		h.inject(Repr{Seq: h.peerISS + 1, Ack: sa.Seq + 1, Flags: FlagACK, Window: 1000, HasTS: true, TSVal: h.peerTS + 1, TSEcr: sa.TSVal})
		h.none()
		c, ok := l.Accept()
		Expect(ok).To(BeTrue())
		Expect(c.State()).To(Equal(StateEstablished))
		Expect(c.Info().SndWnd).To(Equal(1000)) // no window scaling
		Expect(h.s.Stats().PassiveOpens).To(BeEquivalentTo(1))
	})

	DescribeTable("failures of an active open",
		func(reply func(syn captured) Repr, wantState State, wantErr error, wantOut func(syn captured, out []captured)) {
			c := connect()
			syn := h.one()
			h.inject(reply(syn))
			Expect(c.State()).To(Equal(wantState))
			if wantErr != nil {
				Expect(c.Err()).To(MatchError(wantErr))
			}
			wantOut(syn, h.take())
		},
		Entry("RST+ACK answers the SYN: refused (RFC 9293 section 3.10.7.3)",
			func(syn captured) Repr { return Repr{Seq: 0, Ack: syn.Seq + 1, Flags: FlagRST | FlagACK} },
			StateClosed, ErrConnRefused,
			func(_ captured, out []captured) { Expect(out).To(BeEmpty()) }),
		Entry("RST without ACK in SYN-SENT is ignored",
			func(syn captured) Repr { return Repr{Seq: 0, Flags: FlagRST} },
			StateSynSent, nil,
			func(_ captured, out []captured) { Expect(out).To(BeEmpty()) }),
		Entry("RST with an unacceptable ACK is ignored",
			func(syn captured) Repr { return Repr{Seq: 0, Ack: syn.Seq + 7, Flags: FlagRST | FlagACK} },
			StateSynSent, nil,
			func(_ captured, out []captured) { Expect(out).To(BeEmpty()) }),
		Entry("SYN-ACK acknowledging the wrong sequence draws <SEQ=SEG.ACK><CTL=RST>",
			func(syn captured) Repr {
				return Repr{Seq: 1000, Ack: syn.Seq + 100, Flags: FlagSYN | FlagACK, Window: 100}
			},
			StateSynSent, nil,
			func(syn captured, out []captured) {
				Expect(out).To(HaveLen(1))
				Expect(out[0].Flags).To(Equal(FlagRST))
				Expect(out[0].Seq).To(Equal(syn.Seq + 100))
			}),
	)

	It("refuses a SYN to a closed port with RST+ACK, and an ACK with RST (RFC 9293 section 3.10.7.1)", func() {
		h.inject(Repr{Seq: 5000, Flags: FlagSYN, Window: 100})
		rst := h.one()
		Expect(rst.Flags).To(Equal(FlagRST | FlagACK))
		Expect(rst.Seq).To(BeEquivalentTo(0))
		Expect(rst.Ack).To(BeEquivalentTo(5001))
		h.inject(Repr{Seq: 5000, Ack: 777, Flags: FlagACK, Window: 100, Payload: []byte("abc")})
		rst = h.one()
		Expect(rst.Flags).To(Equal(FlagRST))
		Expect(rst.Seq).To(BeEquivalentTo(777))
		h.inject(Repr{Seq: 5000, Flags: FlagRST})
		h.none() // never a RST for a RST
		Expect(h.s.Stats().OutRsts).To(BeEquivalentTo(2))
		Expect(h.s.Stats().Drops.NoSocket).To(BeEquivalentTo(3))
	})

	It("retransmits the SYN with exponential backoff and gives up (RFC 6298 section 5.5, tcp_syn_retries)", func() {
		c := connect()
		first := h.one()
		var times []time.Duration
		for i := 0; i < 8; i++ {
			h.advance(70 * time.Second)
			for _, s := range h.take() {
				Expect(s.Flags).To(Equal(FlagSYN))
				Expect(s.Seq).To(Equal(first.Seq))
				times = append(times, s.at)
			}
			if c.State() == StateClosed {
				break
			}
		}
		Expect(times).To(Equal([]time.Duration{1 * time.Second, 3 * time.Second, 7 * time.Second,
			15 * time.Second, 31 * time.Second, 63 * time.Second}))
		Expect(c.State()).To(Equal(StateClosed))
		Expect(c.Err()).To(MatchError(ErrTimeout))
		Expect(h.now).To(BeNumerically(">=", 127*time.Second))
		Expect(h.s.Stats().AttemptFails).To(BeEquivalentTo(1))
		Expect(h.s.NumConns()).To(BeZero())
	})

	It("starts data with a 3 s RTO when the SYN needed a retransmission (RFC 6298 section 5.7)", func() {
		c := connect()
		syn := h.one()
		h.advance(1500 * time.Millisecond)
		Expect(h.one().Seq).To(Equal(syn.Seq)) // retransmitted at 1 s
		h.inject(synAck(syn.Seq, defaultPeer()))
		h.one()
		Expect(c.State()).To(Equal(StateEstablished))
		Expect(c.Info().RTO).To(Equal(3 * time.Second)) // Karn: no sample from the retransmitted SYN
	})

	It("retransmits the SYN-ACK and drops the half-open connection after synack_retries", func() {
		h = newHarness(tuned(func(c *Config) { c.SynAckRetries = 2 }))
		_, err := h.s.Listen(h.local, h.lport, 4)
		Expect(err).NotTo(HaveOccurred())
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100, MSS: 1000})
		sa := h.one()
		h.advance(10 * time.Second)
		var times []time.Duration
		for _, s := range h.take() {
			Expect(s.Flags).To(Equal(FlagSYN | FlagACK))
			Expect(s.Seq).To(Equal(sa.Seq))
			times = append(times, s.at)
		}
		Expect(times).To(Equal([]time.Duration{time.Second, 3 * time.Second}))
		Expect(h.s.NumConns()).To(BeZero())
		// A retransmitted SYN is answered with the same SYN-ACK.
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		sa2 := h.one()
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 100})
		Expect(h.one().Seq).To(Equal(sa2.Seq))
	})

	It("completes a simultaneous open (RFC 9293 section 3.5 figure 8)", func() {
		c := connect()
		syn := h.one()
		// The peer's SYN crosses ours.
		h.inject(Repr{Seq: h.peerISS, Flags: FlagSYN, Window: 65535, MSS: 1460})
		sa := h.one()
		Expect(sa.Flags).To(Equal(FlagSYN | FlagACK))
		Expect(sa.Seq).To(Equal(syn.Seq))
		Expect(sa.Ack).To(Equal(h.peerISS + 1))
		Expect(c.State()).To(Equal(StateSynReceived))
		// The peer's SYN-ACK repeats its SYN: out of window, so it is
		// answered with an ACK.
		h.inject(Repr{Seq: h.peerISS, Ack: syn.Seq + 1, Flags: FlagSYN | FlagACK, Window: 65535, MSS: 1460})
		a := h.one()
		Expect(a.Flags).To(Equal(FlagACK))
		Expect(a.Ack).To(Equal(h.peerISS + 1))
		Expect(c.State()).To(Equal(StateSynReceived))
		// The peer's ACK completes it.
		h.inject(Repr{Seq: h.peerISS + 1, Ack: syn.Seq + 1, Flags: FlagACK, Window: 65535})
		Expect(c.State()).To(Equal(StateEstablished))
		h.none()
	})

	It("does simultaneous open between two engines on a wire", func() {
		w := newWire(wireConfig{latency: time.Millisecond, seed: 1}, [2]Config{DefaultConfig(), DefaultConfig()})
		a, err := w.stacks[0].Connect(0, Addr{w.addrs[0], 1111}, Addr{w.addrs[1], 2222})
		Expect(err).NotTo(HaveOccurred())
		b, err := w.stacks[1].Connect(0, Addr{w.addrs[1], 2222}, Addr{w.addrs[0], 1111})
		Expect(err).NotTo(HaveOccurred())
		for w.step(time.Second) {
		}
		Expect(a.State()).To(Equal(StateEstablished))
		Expect(b.State()).To(Equal(StateEstablished))
		_, _ = a.Write([]byte("hello"))
		for w.step(2 * time.Second) {
		}
		buf := make([]byte, 10)
		n, err := b.Read(buf)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(buf[:n])).To(Equal("hello"))
	})
})
