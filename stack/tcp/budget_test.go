package tcp

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a connection budget shared by the stacks of a process", func() {
	It("refuses the connection past the process-wide limit, counts it, and gives the place back when a connection ends", func() {
		budget := NewConnBudget(1)
		// conn_limit_action drop: Gazelle's silent refusal (the default,
		// rst, is the spec in limits_test.go).
		drop := tuned(func(c *Config) { c.ConnLimitAction = ConnLimitDrop })
		a, b := newHarness(drop), newHarness(drop)
		a.s.SetConnBudget(budget)
		b.s.SetConnBudget(budget)
		a.established(defaultPeer())
		Expect(budget.InUse()).To(Equal(1))

		_, err := b.s.Listen(b.local, b.lport, 16)
		Expect(err).NotTo(HaveOccurred())
		b.inject(Repr{Seq: b.peerISS, Flags: FlagSYN, Window: 65535})
		b.none() // no SYN-ACK: the SYN is dropped, as Gazelle refuses past max_connections
		Expect(b.s.Stats().ConnLimitRefused).To(BeEquivalentTo(1))
		_, err = b.s.Connect(b.now, Addr{IP: b.local}, Addr{IP: b.remote, Port: 9})
		Expect(err).To(MatchError(ErrConnLimit))

		for c := range a.s.conns.all() {
			c.Abort()
		}
		a.s.Poll(a.now)
		Expect(budget.InUse()).To(Equal(0))
		b.inject(Repr{Seq: b.peerISS, Flags: FlagSYN, Window: 65535})
		Expect(b.one().Flags).To(Equal(FlagSYN | FlagACK))
		Expect(budget.InUse()).To(Equal(1))
	})
})
