package tcp

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/statstest"
)

var _ = Describe("Stack.ResetStats", func() {

	It("zeroes the counters, keeps the connections established, and counts only what follows", func() {
		h := newHarness(DefaultConfig())
		c := h.established(defaultPeer())
		// Warm-up: data both ways and a segment to a closed port.
		_, err := c.Write([]byte("warm-up"))
		Expect(err).NotTo(HaveOccurred())
		h.s.Poll(h.now)
		out := h.one()
		h.inject(h.seg(FlagACK|FlagPSH, out.Seq.Add(len(out.Payload)), []byte("hi")))
		h.peerNxt = h.peerNxt.Add(2)
		h.advance(time.Second)
		h.take()
		h.inject(Repr{DstPort: 81, Seq: 9, Flags: FlagSYN, Window: 100})
		h.take()
		before := h.s.Stats()
		Expect(before.PassiveOpens).To(BeEquivalentTo(1))
		Expect(before.CurrEstab).To(BeEquivalentTo(1))
		Expect(before.OutDataBytes).To(BeEquivalentTo(7))
		Expect(before.InDataBytes).To(BeEquivalentTo(2))
		Expect(before.Drops.NoSocket).To(BeEquivalentTo(1))

		h.s.ResetStats()
		after := h.s.Stats()
		Expect(statstest.Problems(before, after, []string{"CurrEstab", "MemInUse"}, []string{"MemPeak"})).To(BeEmpty())
		Expect(h.s.NumConns()).To(Equal(1))

		// The measured window: more data on the open connection, then
		// its close, which takes CurrEstab down from the kept value (a
		// zeroed gauge would wrap around here).
		h.inject(h.seg(FlagACK|FlagPSH, out.Seq.Add(len(out.Payload)), []byte("abc")))
		h.peerNxt = h.peerNxt.Add(3)
		_, err = c.Write([]byte("hello"))
		Expect(err).NotTo(HaveOccurred())
		h.s.Poll(h.now)
		Expect(c.Close()).To(Succeed())
		h.s.Poll(h.now)
		st := h.s.Stats()
		Expect(st.InDataBytes).To(BeEquivalentTo(3))
		Expect(st.OutDataBytes).To(BeEquivalentTo(5))
		Expect(st.InSegs).To(BeEquivalentTo(1))
		Expect(st.PassiveOpens).To(BeZero())
		Expect(st.Drops.NoSocket).To(BeZero())
		Expect(st.CurrEstab).To(BeZero())
	})
})
